# SPDX-License-Identifier: MIT
"""Whether a GPU is usable, for the GPU test scripts run by ctest (which
exit 77, skipped, without one): nvidia-smi lists one."""
import subprocess


def gpu_present():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    except OSError:
        return False
