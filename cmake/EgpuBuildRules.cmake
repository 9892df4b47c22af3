# Build rules shared by tests and examples: eBPF objects from restricted C
# (clang -target bpf) and PTX from CUDA C (nvcc -ptx), both at build time.

# egpu_bpf_object(OUT_VAR SOURCE) -> ${OUT_VAR} = path of SOURCE's .bpf.o
function(egpu_bpf_object out_var src)
  get_filename_component(name ${src} NAME_WE)
  get_filename_component(abs ${src} ABSOLUTE)
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o)
  add_custom_command(OUTPUT ${obj}
    COMMAND ${BPF_CLANG} -target bpf -mcpu=v3 -O2 -g -Wall ${EGPU_BPF_WERROR}
      -I${PROJECT_SOURCE_DIR}/include -c ${abs} -o ${obj}
    DEPENDS ${abs} ${PROJECT_SOURCE_DIR}/include/egpu/bpf_helpers.h
    COMMENT "eBPF object ${name}.bpf.o" VERBATIM)
  set(${out_var} ${obj} PARENT_SCOPE)
endfunction()

# egpu_cuda_ptx(OUT_VAR SOURCE [ARCH sm_90] [FLAGS ...]) -> .ptx path
function(egpu_cuda_ptx out_var src)
  cmake_parse_arguments(P "" "ARCH;SUFFIX" "FLAGS" ${ARGN})
  if(NOT P_ARCH)
    set(P_ARCH sm_90)
  endif()
  get_filename_component(name ${src} NAME_WE)
  get_filename_component(abs ${src} ABSOLUTE)
  set(ptx ${CMAKE_CURRENT_BINARY_DIR}/${name}${P_SUFFIX}.ptx)
  add_custom_command(OUTPUT ${ptx}
    COMMAND ${NVCC} -ptx -arch=${P_ARCH} ${P_FLAGS} ${abs} -o ${ptx}
    DEPENDS ${abs} COMMENT "PTX ${name}${P_SUFFIX}.ptx" VERBATIM)
  set(${out_var} ${ptx} PARENT_SCOPE)
endfunction()

# egpu_go_env(OUT_VAR): the environment in which `go` builds and tests
# against this build tree's libegpu: offline (no module proxy), caches under
# the build tree, egpu.pc from bindings/go. Go's cache does not see files
# outside the Go packages (SWIG reads egpu.h through -I): their hash in
# CGO_CPPFLAGS makes a change rebuild, and cmake re-runs when one changes so
# the hash follows.
# Also finds GO_EXECUTABLE.
function(egpu_go_env out_var)
  find_program(GO_EXECUTABLE go REQUIRED)
  set(go_dir ${PROJECT_BINARY_DIR}/bindings/go)
  # What cgo reads from outside the Go packages: the headers SWIG wraps,
  # and the CUDA shim the GPU tests compile in.
  set(inputs ${PROJECT_SOURCE_DIR}/include/egpu.h
    ${PROJECT_SOURCE_DIR}/include/egpu/ctx.h
    ${PROJECT_SOURCE_DIR}/examples/go-kernelstat/cudashim.c)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${inputs})
  set(all "")
  foreach(f ${inputs})
    file(READ ${f} text)
    string(APPEND all "${text}")
  endforeach()
  string(MD5 md5 "${all}")
  set(${out_var}
    CGO_CPPFLAGS=-DEGPU_H_MD5_${md5}
    GOCACHE=${go_dir}/gocache GOPATH=${go_dir}/gopath
    GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1
    PKG_CONFIG_PATH=${go_dir}/pkgconfig PARENT_SCOPE)
endfunction()
