# Install layout and packaging for openvaala. The root CMakeLists.txt includes this file after
# `install(TARGETS openvaala RUNTIME DESTINATION bin)`:
#
#   include(packaging/openvaala-package.cmake)
#
# Layout under the prefix (also the root of the release archives that Zed and the ACP Registry
# unpack, so their `cmd` is ./bin/openvaala):
#   bin/openvaala
#   share/openvaala/skills/<skill>/SKILL.md   the built-in skill(s)
#   share/doc/openvaala/README.md, share/doc/openvaala/docs/...
include(GNUInstallDirs)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/runtime/builtin_skills/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/openvaala/skills
        FILES_MATCHING PATTERN "*"
        PATTERN "*.sh" EXCLUDE
        PATTERN "*.cmake" EXCLUDE)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# `cpack -G DEB` in the build directory (scripts/release.sh --deb)
set(CPACK_PACKAGE_NAME "openvaala")
set(CPACK_PACKAGE_VENDOR "OpenVaala")
set(CPACK_PACKAGE_CONTACT "OpenVaala maintainers <maintainers@openvaala.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Coding agent for editors (Agent Client Protocol server)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/openvaala/openvaala")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR "TGZ;DEB")
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# shared-library dependencies found with dpkg-shlibdeps (only libc with OPENVAALA_STATIC_RUNTIME)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
