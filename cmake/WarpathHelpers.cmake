# warpath_add_test(NAME SOURCES...): one GoogleTest binary registered with CTest.
function(warpath_add_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE warpath_io warpath_testsupport GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
endfunction()

# Warnings for our own targets. CUDA sources get the host compiler's (for their host code) and
# nvcc's member-order check; -Wconversion stays off there, as nvcc's generated host stubs
# trip it.
function(warpath_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wshadow --Wreorder>)
endfunction()

# warpath_module(<name> PATHS <paths>... SOURCES <globs>... [CUDA <globs>...]
#                [DEPENDS <modules>... | ABOVE_ALL] [FAMILIES <tags>...] [IF <variable>] [WHOLE])
# One module of src/: the static library warpath_<name> from its SOURCES (globs relative to
# src/; CUDA globs only when CUDA is built), linked to the modules it DEPENDS on and to nothing
# else. Static libraries alone would not stop a module from using one it does not declare (the
# program's link supplies it), so PATHS (relative to the repository root) name the files the
# module owns, and tests/layering/test_layering.py reads these calls and fails on any #include
# that crosses to a module not in DEPENDS, and on cycles. IF: build the module only when the variable is true (a module that depends on one not
# built is built without that dependency; its sources test the same condition).
# WHOLE: the library registers what it holds when the program starts (the chain modules'
# WARPATH_REGISTER_MODULE) and nothing calls it by name, so everything that links it, here and
# in warpath_framework, links it whole (--whole-archive, as DPDK's drivers are linked) and the
# linker drops no registration. warpath_link_module() is how anything else links one.
# ABOVE_ALL: the module depends on every module declared before it (the chain modules and the
# self-test sit above all the engine libraries), so a new library declared above them joins
# them with no other line. FAMILIES: the tags of the engine families the library registers
# (WARPATH_REGISTER_ENGINE_FAMILY, core/registry.hpp); warpath_engine_family_refs() makes the
# self-test library refer to each, so that every program listing the engines keeps them.
function(warpath_module name)
  cmake_parse_arguments(M "WHOLE;ABOVE_ALL" "IF" "PATHS;SOURCES;CUDA;DEPENDS;FAMILIES" ${ARGN})
  if(M_IF AND NOT ${M_IF})
    return()
  endif()
  if(M_ABOVE_ALL)
    get_property(M_DEPENDS GLOBAL PROPERTY WARPATH_MODULE_NAMES)
  endif()
  set(globs)
  foreach(g IN LISTS M_SOURCES)
    list(APPEND globs ${CMAKE_CURRENT_SOURCE_DIR}/${g})
  endforeach()
  if(WARPATH_HAVE_CUDA)
    foreach(g IN LISTS M_CUDA)
      list(APPEND globs ${CMAKE_CURRENT_SOURCE_DIR}/${g})
    endforeach()
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${globs})
  set(target warpath_${name})
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/include
                                       PRIVATE ${PROJECT_SOURCE_DIR}/src)
  foreach(d IN LISTS M_DEPENDS)
    if(TARGET warpath_${d})
      warpath_link_module(${target} PUBLIC ${d})
    endif()
  endforeach()
  if(M_WHOLE)
    set_property(TARGET ${target} PROPERTY WARPATH_WHOLE ON)
  endif()
  warpath_warnings(${target})
  if(WARPATH_HAVE_CUDA)
    set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF
                                               POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
  endif()
  set_property(GLOBAL APPEND PROPERTY WARPATH_MODULE_TARGETS ${target})
  set_property(GLOBAL APPEND PROPERTY WARPATH_MODULE_NAMES ${name})
  get_property(refs_written GLOBAL PROPERTY WARPATH_ENGINE_FAMILY_REFS_WRITTEN)
  if(M_FAMILIES AND refs_written)
    message(FATAL_ERROR "warpath_module(${name}): FAMILIES after warpath_engine_family_refs(): "
                        "declare the library above the modules and the self-test")
  endif()
  set_property(GLOBAL APPEND PROPERTY WARPATH_ENGINE_FAMILIES ${M_FAMILIES})
endfunction()

# warpath_engine_family_refs(<module>): writes engine_families.cpp, which refers to the
# registration of every engine family declared so far (FAMILIES: the tags of the
# libraries' WARPATH_REGISTER_ENGINE_FAMILY), and adds it to warpath_<module>: a program that
# links that module lists every family, the linker keeping each registry file.
function(warpath_engine_family_refs module)
  get_property(tags GLOBAL PROPERTY WARPATH_ENGINE_FAMILIES)
  set(decls "")
  set(refs "")
  foreach(t IN LISTS tags)
    string(APPEND decls "extern \"C\" const bool warpath_engine_family_${t};\n")
    string(APPEND refs "      &warpath_engine_family_${t},\n")
  endforeach()
  set(file ${CMAKE_CURRENT_BINARY_DIR}/generated/engine_families.cpp)
  file(CONFIGURE OUTPUT ${file} CONTENT "// Written by CMake (warpath_engine_family_refs): the engine families' registrations.
#include <cstddef>
${decls}
namespace warpath {
/// How many families this program registered by the libraries' CMake lines (the reference
/// keeps every registration in the link).
size_t engine_family_refs() {
  static const bool* const refs[] = {
${refs}      nullptr};
  size_t n = 0;
  for (const bool* r : refs) n += r != nullptr && *r;
  return n;
}
}  // namespace warpath
")
  target_sources(warpath_${module} PRIVATE ${file})
  set_property(GLOBAL PROPERTY WARPATH_ENGINE_FAMILY_REFS_WRITTEN ON)
endfunction()

# warpath_link_module(<target> <PUBLIC|PRIVATE|INTERFACE> <module>): links warpath_<module>,
# whole when it was declared WHOLE (one way for every consumer: CMake refuses a library linked
# both whole and plainly).
function(warpath_link_module target scope module)
  get_target_property(whole warpath_${module} WARPATH_WHOLE)
  if(whole)
    target_link_libraries(${target} ${scope} "$<LINK_LIBRARY:WHOLE_ARCHIVE,warpath_${module}>")
  else()
    target_link_libraries(${target} ${scope} warpath_${module})
  endif()
endfunction()
