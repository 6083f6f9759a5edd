# The Python package's extension (python/: nanobind over the engines; docs/python.md).
#
#   WARPATH_PYTHON  AUTO|ON|OFF  build warpath._warpath (AUTO: when Python's headers and
#                                nanobind are found; ON fails without them)
#
# The interpreter: the one scikit-build-core runs (`pip install .` sets Python_EXECUTABLE),
# else the repository's .venv (scripts/setup.sh installs nanobind there), else python3. The
# engine libraries are built position-independent so the extension can link them (the CUDA
# build does so already).
set(WARPATH_PYTHON "AUTO" CACHE STRING "Build the Python package's extension: AUTO, ON or OFF")
set(WARPATH_HAVE_PYTHON OFF)
if(WARPATH_MINIMAL OR WARPATH_PYTHON STREQUAL "OFF")
  return()
endif()
if(NOT Python_EXECUTABLE AND EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  set(Python_EXECUTABLE ${PROJECT_SOURCE_DIR}/.venv/bin/python)
endif()
if(WARPATH_PYTHON STREQUAL "ON")
  find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)
else()
  find_package(Python 3.9 QUIET COMPONENTS Interpreter Development.Module)
endif()
if(Python_FOUND)
  execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir
                  OUTPUT_VARIABLE WARPATH_NANOBIND_DIR OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE nb_rc ERROR_QUIET)
  if(nb_rc EQUAL 0 AND WARPATH_NANOBIND_DIR)
    find_package(nanobind CONFIG QUIET PATHS ${WARPATH_NANOBIND_DIR} NO_DEFAULT_PATH)
  endif()
endif()
if(nanobind_FOUND)
  set(WARPATH_HAVE_PYTHON ON)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  message(STATUS "Python ${Python_VERSION} (${Python_EXECUTABLE}), nanobind ${nanobind_VERSION}: "
                 "the Python package (python/)")
elseif(WARPATH_PYTHON STREQUAL "ON")
  message(FATAL_ERROR "WARPATH_PYTHON=ON: nanobind not found for ${Python_EXECUTABLE} "
                      "(pip install nanobind, or run scripts/setup.sh)")
else()
  message(STATUS "Python package: not built (needs Python's headers and nanobind: scripts/setup.sh)")
endif()
