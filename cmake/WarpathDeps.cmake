# Third-party libraries, all from Debian packages (scripts/setup.sh installs them).
# WARPATH_MINIMAL builds need none of them.
if(WARPATH_MINIMAL)
  return()
endif()
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCAP REQUIRED IMPORTED_TARGET libpcap)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)
find_package(tomlplusplus CONFIG REQUIRED)

# libxdp + libbpf (Debian libxdp-dev, libbpf-dev): AF_XDP ports. Without them `afxdp:` ports
# answer "not built" and everything else works.
pkg_check_modules(XDP QUIET IMPORTED_TARGET libxdp)
pkg_check_modules(BPF QUIET IMPORTED_TARGET libbpf)
set(WARPATH_HAVE_XDP OFF)
if(XDP_FOUND AND BPF_FOUND)
  set(WARPATH_HAVE_XDP ON)
  message(STATUS "libxdp ${XDP_VERSION}: AF_XDP ports")
else()
  message(STATUS "libxdp/libbpf not found: afxdp ports are not built")
endif()

# DPDK (optional; Debian libdpdk-dev): rte_lpm, rte_lpm6, rte_fib and rte_fib6, the anchors of
# `warpath bench lookup` (bench/anchors). WARPATH_WITH_DPDK=AUTO uses it when pkg-config finds
# it; without it everything builds and the benchmark reports the anchors as unavailable.
set(WARPATH_WITH_DPDK "AUTO" CACHE STRING "Build the DPDK benchmark anchors: AUTO, ON or OFF")
set(WARPATH_HAVE_DPDK OFF)
if(NOT WARPATH_WITH_DPDK STREQUAL "OFF")
  if(WARPATH_WITH_DPDK STREQUAL "ON")
    pkg_check_modules(DPDK REQUIRED libdpdk)
  else()
    pkg_check_modules(DPDK QUIET libdpdk)
  endif()
  if(DPDK_FOUND)
    # Only the libraries the anchors use (libdpdk links every library and driver).
    set(_warpath_dpdk_libs)
    foreach(lib rte_fib rte_rib rte_lpm rte_hash rte_rcu rte_mempool rte_ring rte_eal
                rte_kvargs rte_telemetry)
      find_library(WARPATH_DPDK_${lib} NAMES ${lib} HINTS ${DPDK_LIBRARY_DIRS})
      if(NOT WARPATH_DPDK_${lib})
        message(FATAL_ERROR "DPDK ${DPDK_VERSION} found but lib${lib} is missing")
      endif()
      list(APPEND _warpath_dpdk_libs ${WARPATH_DPDK_${lib}})
    endforeach()
    add_library(warpath_dpdk INTERFACE)
    target_include_directories(warpath_dpdk SYSTEM INTERFACE ${DPDK_INCLUDE_DIRS})
    # -include rte_config.h and DPDK's -march baseline; kept to the targets that use DPDK.
    target_compile_options(warpath_dpdk INTERFACE ${DPDK_CFLAGS_OTHER})
    target_link_libraries(warpath_dpdk INTERFACE ${_warpath_dpdk_libs})
    set(WARPATH_HAVE_DPDK ON)
    message(STATUS "DPDK ${DPDK_VERSION}: benchmark anchors rte_lpm, rte_lpm6, rte_fib, rte_fib6")
  else()
    message(STATUS "DPDK not found: warpath bench lookup runs without its DPDK anchors")
  endif()
endif()
