// Force-included into the readers fuzz build (fuzz/CMakeLists.txt): toml++'s internal debug
// assertions off. One of them fires on "[\n" where the library's release build, which warpath
// links, reports a parse error; the fuzzer checks warpath's handling of that error.
#pragma once
#define TOML_ASSERT(expr) static_cast<void>(0)
