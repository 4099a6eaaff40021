// fuzz/entry.cc: the libFuzzer entry point of one target, chosen when built
// (NCCLPM_FUZZ_TARGET=text_log, ...; see fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ncclpm::fuzz::NCCLPM_FUZZ_TARGET(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
