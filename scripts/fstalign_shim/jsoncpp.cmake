# Stands in for fstalign's third-party/jsoncpp (add_subdirectory(third-party/jsoncpp) and its
# `jsoncpp_lib_static` target) with Debian's libraries: jsoncpp itself, and the ones whose
# submodules are left out (inih's ini.c and INIReader.cpp are empty stand-ins, their code comes
# from libinih/libINIReader; spdlog is Debian's header build, which uses the external fmt).
find_package(jsoncpp REQUIRED)
add_library(jsoncpp_lib_static INTERFACE)
target_include_directories(jsoncpp_lib_static INTERFACE /usr/include/jsoncpp)
target_link_libraries(jsoncpp_lib_static INTERFACE jsoncpp_lib INIReader inih fmt)
