# cmake -DINPUT=file -DOUTPUT=file.cpp -DNAMESPACE=ns -DNAME=kName -P EmbedBytes.cmake
# Writes a .cpp defining `const unsigned char NAME[]` and `const size_t NAMESize` in NAMESPACE
# with INPUT's bytes (a byte array, not a string literal: no length limits, no escaping).
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REPEAT "0x..," 20 row)
string(REGEX REPLACE "(${row})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by cmake/EmbedBytes.cmake; do not edit.
#include <cstddef>

namespace ${NAMESPACE} {
extern const unsigned char ${NAME}Bytes[];
extern const std::size_t ${NAME}Size;
const unsigned char ${NAME}Bytes[] = {
${bytes}};
const std::size_t ${NAME}Size = sizeof(${NAME}Bytes);
}  // namespace ${NAMESPACE}
")
