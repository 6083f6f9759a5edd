# warpath_add_test(NAME SOURCES...): one GoogleTest binary registered with CTest.
function(warpath_add_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE warpath_io warpath_testsupport GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
endfunction()

# Warnings for our own targets.
function(warpath_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion>)
endfunction()
