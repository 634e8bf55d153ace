# Cross build for linux-aarch64 on a Debian 12 x86_64 machine (scripts/build-aarch64.sh):
# Debian's cross compiler (g++-aarch64-linux-gnu) and the multiarch :arm64 -dev packages, which
# install into /usr/lib/aarch64-linux-gnu and /usr/include/aarch64-linux-gnu (the cross compiler
# searches those by itself); yaml-cpp's, which cannot be installed next to the amd64 one, is
# unpacked into <build>/sysroot by the script. Binaries built here run on x86_64 under qemu-user
# (qemu-aarch64-static): CMake uses it to list the GoogleTest cases and ctest to run them.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(triplet aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${triplet}-gcc)
set(CMAKE_CXX_COMPILER ${triplet}-g++)
set(CMAKE_AR ${triplet}-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${triplet}-ranlib CACHE FILEPATH "")
set(CMAKE_STRIP ${triplet}-strip CACHE FILEPATH "")
set(CMAKE_LIBRARY_ARCHITECTURE ${triplet})

# Libraries, headers and CMake/pkg-config files of the target only; programs of the host.
set(CMAKE_FIND_ROOT_PATH /usr/${triplet})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
list(APPEND CMAKE_PREFIX_PATH /usr/lib/${triplet}/cmake)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${triplet}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Running what we built: qemu-user, with the arm64 loader and libraries that multiarch put in /.
find_program(OPENVAALA_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(OPENVAALA_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${OPENVAALA_QEMU_AARCH64})
endif()
