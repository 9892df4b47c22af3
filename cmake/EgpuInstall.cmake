# Install the library, headers, egpu.pc and a CMake package for
# find_package(egpu) providing the imported target egpu::egpu.
include(CMakePackageConfigHelpers)

install(TARGETS egpu EXPORT egpuTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS egpu_static ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/egpu.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/egpu
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} OPTIONAL)

set(EGPU_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/egpu)
install(EXPORT egpuTargets NAMESPACE egpu:: DESTINATION ${EGPU_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/egpuConfig.cmake.in
  ${PROJECT_BINARY_DIR}/egpuConfig.cmake INSTALL_DESTINATION ${EGPU_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/egpuConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/egpuConfig.cmake
  ${PROJECT_BINARY_DIR}/egpuConfigVersion.cmake DESTINATION ${EGPU_CMAKE_DIR})

# Programs linked with `pkg-config --libs egpu` find libegpu.so where it was
# installed, without LD_LIBRARY_PATH. Distributions installing into /usr,
# where the loader looks anyway, may turn this off.
option(EGPU_PC_RPATH "egpu.pc adds -Wl,-rpath,LIBDIR to its Libs" ON)
set(EGPU_PC_RPATH_FLAG "")
if(EGPU_PC_RPATH)
  set(EGPU_PC_RPATH_FLAG " -Wl,-rpath,\${libdir}")
endif()
file(RELATIVE_PATH EGPU_PC_PREFIX_REL
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${PROJECT_SOURCE_DIR}/pkgconfig/egpu.pc.in
  ${PROJECT_BINARY_DIR}/egpu.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/egpu.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
