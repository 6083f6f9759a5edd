# Third-party libraries, all from Debian packages (scripts/setup.sh installs them).
# WARPATH_MINIMAL builds need none of them; they take PCRE2 where it is found (the NIDS).

# PCRE2 (Debian libpcre2-dev): the cpu.pcre2 pattern engine and the NIDS's pcre keyword (so the
# NIDS, cuda.nids included, is built only where it is). Through pkg-config, or, where there is
# none (a GPU machine given the packages' files: scripts/gpu-data.sh), under WARPATH_PCRE2_ROOT.
set(WARPATH_PCRE2_ROOT "" CACHE PATH "Where libpcre2-dev's and libpcre2-8-0's files were unpacked")
set(WARPATH_HAVE_PCRE2 OFF)
if(WARPATH_PCRE2_ROOT)
  find_path(WARPATH_PCRE2_INCLUDE pcre2.h PATHS ${WARPATH_PCRE2_ROOT}/usr/include NO_DEFAULT_PATH)
  find_library(WARPATH_PCRE2_LIBRARY pcre2-8 PATHS ${WARPATH_PCRE2_ROOT}/usr/lib/x86_64-linux-gnu
               ${WARPATH_PCRE2_ROOT}/usr/lib NO_DEFAULT_PATH)
  if(WARPATH_PCRE2_INCLUDE AND WARPATH_PCRE2_LIBRARY)
    add_library(PkgConfig::PCRE2 INTERFACE IMPORTED)
    target_include_directories(PkgConfig::PCRE2 INTERFACE ${WARPATH_PCRE2_INCLUDE})
    target_link_libraries(PkgConfig::PCRE2 INTERFACE ${WARPATH_PCRE2_LIBRARY})
    set(WARPATH_HAVE_PCRE2 ON)
    message(STATUS "PCRE2 under ${WARPATH_PCRE2_ROOT}: the NIDS and cpu.pcre2")
  else()
    message(STATUS "PCRE2: nothing usable under ${WARPATH_PCRE2_ROOT}")
  endif()
else()
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(PCRE2 QUIET IMPORTED_TARGET libpcre2-8)
    if(PCRE2_FOUND)
      set(WARPATH_HAVE_PCRE2 ON)
      message(STATUS "PCRE2 ${PCRE2_VERSION}: the cpu.pcre2 pattern engine and the NIDS")
    endif()
  endif()
endif()

# libhtp (Debian libhtp-dev; OISF's HTTP parser, the one Suricata used through 7.x): the NIDS's
# HTTP app layer. Linked from its static archive, so binaries carried to another machine (the
# GPU device) need no libhtp there; it needs zlib. The NIDS is built only with it.
find_path(WARPATH_HTP_INCLUDE htp/htp.h)
find_library(WARPATH_HTP_LIBRARY NAMES libhtp.a htp)
find_library(WARPATH_ZLIB_LIBRARY NAMES z)
set(WARPATH_HAVE_HTP OFF)
if(WARPATH_HTP_INCLUDE AND WARPATH_HTP_LIBRARY AND WARPATH_ZLIB_LIBRARY)
  add_library(warpath_htp INTERFACE IMPORTED)
  target_include_directories(warpath_htp INTERFACE ${WARPATH_HTP_INCLUDE})
  target_link_libraries(warpath_htp INTERFACE ${WARPATH_HTP_LIBRARY} ${WARPATH_ZLIB_LIBRARY})
  set(WARPATH_HAVE_HTP ON)
  message(STATUS "libhtp: the NIDS's HTTP parser (${WARPATH_HTP_LIBRARY})")
else()
  message(STATUS "libhtp not found (apt-get install libhtp-dev): the NIDS is not built")
endif()
# ldns (Debian libldns-dev): the NIDS's DNS parser; OpenSSL's libcrypto (libssl-dev): its TLS
# certificates (X.509 names) and the JA3 / fingerprint digests. ldns from its static archive
# (the shared library where the Python extension is built: Debian's archive is not
# position-independent);
# libcrypto from its static archive in minimal builds (binaries carried to the GPU device need
# no OpenSSL there), else the shared library the ESP engines use too.
find_path(WARPATH_LDNS_INCLUDE ldns/ldns.h)
if(WARPATH_HAVE_PYTHON)
  find_library(WARPATH_LDNS_LIBRARY NAMES ldns libldns.a)
else()
  find_library(WARPATH_LDNS_LIBRARY NAMES libldns.a ldns)
endif()
find_path(WARPATH_CRYPTO_INCLUDE openssl/x509.h)
if(WARPATH_MINIMAL)
  find_library(WARPATH_NIDS_CRYPTO NAMES libcrypto.a crypto)
else()
  find_library(WARPATH_NIDS_CRYPTO NAMES crypto)
endif()
set(WARPATH_HAVE_NIDS_APP OFF)
if(WARPATH_LDNS_INCLUDE AND WARPATH_LDNS_LIBRARY AND WARPATH_CRYPTO_INCLUDE AND WARPATH_NIDS_CRYPTO)
  add_library(warpath_nids_app_deps INTERFACE IMPORTED)
  target_include_directories(warpath_nids_app_deps INTERFACE ${WARPATH_LDNS_INCLUDE} ${WARPATH_CRYPTO_INCLUDE})
  target_link_libraries(warpath_nids_app_deps INTERFACE ${WARPATH_LDNS_LIBRARY} ${WARPATH_NIDS_CRYPTO} ${CMAKE_DL_LIBS})
  set(WARPATH_HAVE_NIDS_APP ON)
  message(STATUS "ldns and libcrypto: the NIDS's DNS and TLS parsers")
else()
  message(STATUS "ldns or libcrypto not found (apt-get install libldns-dev libssl-dev): the NIDS is not built")
endif()
if(WARPATH_HAVE_PCRE2 AND WARPATH_HAVE_HTP AND WARPATH_HAVE_NIDS_APP)
  set(WARPATH_BUILD_NIDS ON)
else()
  set(WARPATH_BUILD_NIDS OFF)
endif()

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
# cpp-httplib (Debian libcpp-httplib-dev, built as a shared library there): the HTTP client of
# the metrics server's tests (the server, src/runtime/system/metrics_server.cpp, is a poll loop
# of its own: httplib's thread per connection let eight slow clients block every scrape).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)

# Vectorscan (Debian libvectorscan-dev; Hyperscan's portable fork, pkg-config name libhs): the
# cpu.hs pattern engine and the anchor of the pattern benchmarks. Without it the other pattern
# engines build and cpu.hs is not in the registry.
pkg_check_modules(HS QUIET IMPORTED_TARGET libhs)
set(WARPATH_HAVE_HS OFF)
if(HS_FOUND)
  set(WARPATH_HAVE_HS ON)
  message(STATUS "Vectorscan ${HS_VERSION}: the cpu.hs pattern engine")
else()
  message(STATUS "Vectorscan (libhs) not found: cpu.hs is not built")
endif()

# OpenSSL's libcrypto (Debian libssl-dev): the ref.esp engine, the reference of ESP crypto.
pkg_check_modules(LIBCRYPTO QUIET IMPORTED_TARGET libcrypto)
set(WARPATH_HAVE_OPENSSL OFF)
if(LIBCRYPTO_FOUND)
  set(WARPATH_HAVE_OPENSSL ON)
  message(STATUS "OpenSSL ${LIBCRYPTO_VERSION}: the ref.esp engine")
endif()

# OpenSSL's libssl: TLS for the OpenFlow agent's pssl: and ssl: targets (without it they are
# refused with the reason).
pkg_check_modules(LIBSSL QUIET IMPORTED_TARGET libssl)

# intel-ipsec-mb (Debian libipsec-mb-dev; no pkg-config file): the cpu.esp engine and the
# anchor of the ESP benchmark. cpu.esp also needs OpenSSL (its constant-time compare).
find_path(IPSEC_MB_INCLUDE intel-ipsec-mb.h)
find_library(IPSEC_MB_LIBRARY IPSec_MB)
set(WARPATH_HAVE_IPSEC_MB OFF)
if(IPSEC_MB_INCLUDE AND IPSEC_MB_LIBRARY AND WARPATH_HAVE_OPENSSL)
  set(WARPATH_HAVE_IPSEC_MB ON)
  add_library(warpath_ipsec_mb INTERFACE)
  target_include_directories(warpath_ipsec_mb INTERFACE ${IPSEC_MB_INCLUDE})
  target_link_libraries(warpath_ipsec_mb INTERFACE ${IPSEC_MB_LIBRARY})
  message(STATUS "intel-ipsec-mb: the cpu.esp engine")
else()
  message(STATUS "intel-ipsec-mb not found: cpu.esp is not built")
endif()

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

    # warpath_dpdk_ports: `dpdk:` ports of `warpath run` (src/runtime/system/dpdk_port.cpp):
    # rte_ethdev, the vdev bus, and the drivers. DPDK's drivers (PMDs) register themselves
    # from constructors when their shared library is loaded. A shared-library EAL also loads
    # every library in its plugin directory (Debian: .../dpdk/pmds-23.0) at rte_eal_init, but
    # that depends on how DPDK was built and installed, so the drivers the ports are meant for
    # (and the ring mempool driver every mbuf pool needs) are linked here as well, with
    # --no-as-needed so that the linker keeps them although nothing calls them. (The loader
    # loads a library once, so the plugin scan does not register them twice.)
    set(WARPATH_WITH_DPDK_PORTS ON CACHE BOOL "Build `dpdk:` ports when DPDK is found")
    set(_warpath_dpdk_port_libs)
    set(_warpath_dpdk_port_missing)
    foreach(lib rte_ethdev rte_mbuf rte_mempool rte_ring rte_bus_vdev rte_eal rte_kvargs
                rte_mempool_ring)  # the last: a driver (the "ring_mp_mc" pool ops), see below
      find_library(WARPATH_DPDK_${lib} NAMES ${lib} HINTS ${DPDK_LIBRARY_DIRS})
      if(WARPATH_DPDK_${lib})
        list(APPEND _warpath_dpdk_port_libs ${WARPATH_DPDK_${lib}})
      else()
        list(APPEND _warpath_dpdk_port_missing lib${lib})
      endif()
    endforeach()
    set(_warpath_dpdk_pmds)
    set(_warpath_dpdk_pmd_names)
    # mempool_stack: the LIFO "stack" pool ops of zero-copy pools (dpdk_port.cpp).
    foreach(pmd net_pcap net_ring net_af_packet net_af_xdp mempool_stack)
      find_library(WARPATH_DPDK_rte_${pmd} NAMES rte_${pmd} HINTS ${DPDK_LIBRARY_DIRS})
      if(WARPATH_DPDK_rte_${pmd})
        list(APPEND _warpath_dpdk_pmds ${WARPATH_DPDK_rte_${pmd}})
        list(APPEND _warpath_dpdk_pmd_names ${pmd})
      endif()
    endforeach()
    set(WARPATH_HAVE_DPDK_PORTS OFF)
    if(NOT WARPATH_WITH_DPDK_PORTS)
      message(STATUS "WARPATH_WITH_DPDK_PORTS=OFF: dpdk ports are not built")
    elseif(_warpath_dpdk_port_missing)
      message(STATUS "DPDK without ${_warpath_dpdk_port_missing}: dpdk ports are not built")
    else()
      add_library(warpath_dpdk_ports INTERFACE)
      target_include_directories(warpath_dpdk_ports SYSTEM INTERFACE ${DPDK_INCLUDE_DIRS})
      target_compile_options(warpath_dpdk_ports INTERFACE ${DPDK_CFLAGS_OTHER})
      string(REPLACE ";" "," _warpath_dpdk_pmd_text "${_warpath_dpdk_pmd_names}")
      # One link item, so that CMake keeps the flags around the drivers in order.
      list(REMOVE_ITEM _warpath_dpdk_port_libs ${WARPATH_DPDK_rte_mempool_ring})
      string(REPLACE ";" "," _warpath_dpdk_pmd_link
                     "${WARPATH_DPDK_rte_mempool_ring};${_warpath_dpdk_pmds}")
      target_link_libraries(warpath_dpdk_ports INTERFACE ${_warpath_dpdk_port_libs}
        "-Wl,--push-state,--no-as-needed,${_warpath_dpdk_pmd_link},--pop-state")
      set(WARPATH_HAVE_DPDK_PORTS ON)
      message(STATUS "DPDK ${DPDK_VERSION}: dpdk ports (drivers ${_warpath_dpdk_pmd_text})")
    endif()
  else()
    message(STATUS "DPDK not found: warpath bench lookup runs without its DPDK anchors")
  endif()
endif()
