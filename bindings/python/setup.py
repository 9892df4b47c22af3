# SPDX-License-Identifier: MIT
"""Builds the extension egpu._egpu with SWIG against libegpu: the installed
library that pkg-config finds (egpu.pc), or a build tree of this repository
when EGPU_BUILD_DIR names it (its lib/libegpu.so and ../../include).

    pip install --no-build-isolation .                      # installed libegpu
    EGPU_BUILD_DIR=../../build pip install --no-build-isolation .
"""

import os
import shlex
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def pkg_config(flag):
    try:
        out = subprocess.check_output(["pkg-config", flag, "egpu"], text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit("libegpu not found by pkg-config (set PKG_CONFIG_PATH "
                         f"to the directory of egpu.pc, or EGPU_BUILD_DIR): {e}")
    return shlex.split(out)


def library():
    """include_dirs, library_dirs and libraries of libegpu."""
    build = os.environ.get("EGPU_BUILD_DIR")
    if build:
        return ([os.path.join(HERE, "..", "..", "include")],
                [os.path.join(os.path.abspath(build), "lib")], ["egpu"])
    cflags, libs = pkg_config("--cflags"), pkg_config("--libs")
    return ([f[2:] for f in cflags if f.startswith("-I")],
            [f[2:] for f in libs if f.startswith("-L")],
            [f[2:] for f in libs if f.startswith("-l")])


include_dirs, library_dirs, libraries = library()

setup(ext_modules=[Extension(
    "egpu._egpu",
    sources=["egpu.i", "py_thread.c"],
    swig_opts=["-noproxy"] + [f"-I{d}" for d in include_dirs],
    include_dirs=include_dirs + [HERE],
    library_dirs=library_dirs,
    runtime_library_dirs=library_dirs,
    libraries=libraries,
)])
