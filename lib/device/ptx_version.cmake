# Declare the lowest PTX ISA version a PTX file's content needs: nvcc
# declares its own newest (CUDA 13: 9.0) whatever the code uses, and the
# declared version is what a driver checks before it loads a module that
# links the file. ptxas checks every instruction against the declared
# version, so the rewritten file is compiled once here: a feature newer
# than VERSION fails the build, naming it.
#   cmake -DPTX=in.ptx -DOUT=out.ptx -DVERSION=6.3 -DPTXAS=ptxas
#         -DARCH=sm_75 -P ptx_version.cmake
file(READ ${PTX} text)
string(REGEX REPLACE "\n\\.version [0-9]+\\.[0-9]+\n" "\n.version ${VERSION}\n"
  lowered "${text}")
if(lowered STREQUAL text AND NOT text MATCHES "\n\\.version ${VERSION}\n")
  message(FATAL_ERROR "${PTX}: no .version line to lower")
endif()
file(WRITE ${OUT} "${lowered}")
execute_process(COMMAND ${PTXAS} -arch=${ARCH} -c ${OUT} -o ${OUT}.cubin
  RESULT_VARIABLE rc ERROR_VARIABLE err)
file(REMOVE ${OUT}.cubin)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT})
  message(FATAL_ERROR "${PTX} needs a newer PTX ISA than ${VERSION} "
    "(raise EGPU_DEVICE_PTX_VERSION, and the minimum driver in "
    "docs/attach.md, only if that is meant):\n${err}")
endif()
