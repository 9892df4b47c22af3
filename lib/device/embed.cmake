# Turn a PTX file into a C source defining `const char SYMBOL[]` (the text,
# NUL-terminated) and `const unsigned SYMBOL_len`, after checking that the
# PTX defines every function named in REQUIRED.
#   cmake -DPTX=in.ptx -DOUT=out.c -DSYMBOL=name -DREQUIRED="f;g" -P embed.cmake
file(READ ${PTX} text)
foreach(func ${REQUIRED})
  if(NOT text MATCHES "\\.visible \\.func[^\n]*[ )]${func}\\(")
    message(FATAL_ERROR "${PTX} does not define .visible .func ${func}")
  endif()
endforeach()

file(READ ${PTX} hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR len "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# Sixteen bytes a line (CMake regexes have no {n}).
string(REPEAT "0x..," 16 line)
string(REGEX REPLACE "(${line})" "\\1\n\t" bytes "${bytes}")
file(WRITE ${OUT} "/* Generated from ${PTX} by lib/device/embed.cmake. */\n"
  "const char ${SYMBOL}[] = {\n\t${bytes}0x00\n};\n"
  "const unsigned ${SYMBOL}_len = ${len};\n")
