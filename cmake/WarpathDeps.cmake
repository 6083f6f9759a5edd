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
