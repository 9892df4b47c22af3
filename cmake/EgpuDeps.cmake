# Third-party dependencies: LLVM (15-19, 16 is the reference), libbpf and
# libelf, the CUDA toolkit's nvcc/ptxas (build-time only), Check (tests).

find_package(LLVM CONFIG REQUIRED
  HINTS /usr/lib/llvm-16 /usr/lib/llvm-17 /usr/lib/llvm-18 /usr/lib/llvm-19 /usr/lib/llvm-15)
if(LLVM_VERSION_MAJOR LESS 15 OR LLVM_VERSION_MAJOR GREATER 19)
  message(FATAL_ERROR "LLVM ${LLVM_VERSION} found; libegpu needs LLVM 15 to 19")
endif()
message(STATUS "LLVM ${LLVM_VERSION} at ${LLVM_DIR}")
if(NOT LLVM_LINK_LLVM_DYLIB AND NOT TARGET LLVM)
  message(FATAL_ERROR "libegpu links the shared libLLVM; this LLVM has none")
endif()

# libbpf is linked statically so the library runs where libbpf is absent
# (the GPU machines have libelf and zlib, not libbpf).
find_library(LIBBPF_STATIC NAMES libbpf.a REQUIRED)
find_path(LIBBPF_INCLUDE bpf/libbpf.h REQUIRED)
find_library(LIBELF NAMES elf REQUIRED)
find_library(LIBZ NAMES z REQUIRED)
find_library(LIBZSTD NAMES zstd REQUIRED)
# libffi calls user helpers whose signature is known only at run time
# (lib/api/helper.c); found by pkg-config, as egpu.pc requires it.
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBFFI REQUIRED IMPORTED_TARGET libffi)

find_program(NVCC nvcc HINTS /usr/local/cuda/bin ENV CUDA_HOME PATH_SUFFIXES bin)
find_program(PTXAS ptxas HINTS /usr/local/cuda/bin ENV CUDA_HOME PATH_SUFFIXES bin)
find_program(BPF_CLANG NAMES clang-16 clang-17 clang-18 clang-19 clang-15 clang
  HINTS ${LLVM_TOOLS_BINARY_DIR})
message(STATUS "nvcc: ${NVCC}  ptxas: ${PTXAS}  bpf clang: ${BPF_CLANG}")
find_path(CUDA_DRIVER_INCLUDE cuda.h REQUIRED
  HINTS /usr/local/cuda/include ENV CUDA_HOME PATH_SUFFIXES include)
