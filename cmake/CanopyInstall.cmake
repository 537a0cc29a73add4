# SPDX-License-Identifier: MIT
# The library as others consume it: a versioned soname, only the public API exported
# from libcanopy.so, and install rules with a CMake package (canopy::canopy) and a
# pkg-config file. Included from the top-level CMakeLists.txt after the targets exist.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

option(CANOPY_INSTALL "Generate install rules (off when canopy is a subproject)"
       ${PROJECT_IS_TOP_LEVEL})

# The libraries: canopy, and canopy_dist (the MPI layer) when MPI is in.
set(CANOPY_LIBRARIES canopy)
if(CANOPY_HAVE_MPI)
  list(APPEND CANOPY_LIBRARIES canopy_dist)
endif()
foreach(lib ${CANOPY_LIBRARIES})
  set_target_properties(${lib}_shared PROPERTIES VERSION ${PROJECT_VERSION}
                                                 SOVERSION ${PROJECT_VERSION_MAJOR}
                                                 EXPORT_NAME ${lib})
  set_target_properties(${lib}_static PROPERTIES EXPORT_NAME ${lib}_static)
  add_library(canopy::${lib} ALIAS ${lib}_shared)
  add_library(canopy::${lib}_static ALIAS ${lib}_static)
endforeach()

# The exported symbols are the functions the public headers declare, so internal
# helpers (even canopy_-prefixed ones) stay private; the list follows the headers.
file(GLOB CANOPY_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/canopy.h
     ${PROJECT_SOURCE_DIR}/include/canopy/*.h)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CANOPY_PUBLIC_HEADERS})
set(CANOPY_EXPORTED_SYMBOLS)
foreach(h ${CANOPY_PUBLIC_HEADERS})
  file(READ ${h} text)
  string(REGEX MATCHALL "canopy_[A-Za-z0-9_]+[ \t\r\n]*\\(" calls "${text}")
  foreach(c ${calls})
    string(REGEX REPLACE "[ \t\r\n]*\\($" "" name "${c}")
    list(APPEND CANOPY_EXPORTED_SYMBOLS "${name}")
  endforeach()
endforeach()
# libcanopy_dist.so (the MPI layer, a separate library so libcanopy.so needs no libmpi)
# is built from the same sources and uses these internals of the core; its link with
# --no-undefined fails if one is missing here.
if(CANOPY_HAVE_MPI)
  list(APPEND CANOPY_EXPORTED_SYMBOLS canopy_curve_bits canopy_curve_keys canopy_curve_keys_bits
       canopy_hilbert_key canopy_sort_keyed
       "canopy_let_*" canopy_nbody_check_state canopy_nbody_kick canopy_nbody_kick_drift "canopy_gpu_let_*" canopy_gpu_bind_device
       canopy_gpu_device_count canopy_gpu_why_not "canopy_gpu_nccl_*" "canopy_gl_tree_*" canopy_gl_export
       canopy_gl_piece_open canopy_gl_forces canopy_gpu_mp_choose canopy_gpu_mp_forces_host
       "canopy_gpu_nbody_*")
endif()
list(REMOVE_DUPLICATES CANOPY_EXPORTED_SYMBOLS)
list(SORT CANOPY_EXPORTED_SYMBOLS)
list(JOIN CANOPY_EXPORTED_SYMBOLS ";\n    " CANOPY_EXPORT_LIST)
set(CANOPY_VERSION_SCRIPT ${PROJECT_BINARY_DIR}/canopy.map)
file(CONFIGURE OUTPUT ${CANOPY_VERSION_SCRIPT}
     CONTENT "/* Generated from the public headers by cmake/CanopyInstall.cmake. */\n{\n  global:\n    ${CANOPY_EXPORT_LIST};\n  local: *;\n};\n")
if(NOT APPLE AND CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  foreach(lib ${CANOPY_LIBRARIES})
    target_link_options(${lib}_shared PRIVATE "LINKER:--version-script=${CANOPY_VERSION_SCRIPT}")
    set_property(TARGET ${lib}_shared APPEND PROPERTY LINK_DEPENDS ${CANOPY_VERSION_SCRIPT})
  endforeach()
endif()

if(NOT CANOPY_INSTALL)
  return()
endif()

set(CANOPY_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/canopy)
set(CANOPY_INSTALL_TARGETS canopy_jsonc canopy_fftw)
foreach(lib ${CANOPY_LIBRARIES})
  list(APPEND CANOPY_INSTALL_TARGETS ${lib}_shared ${lib}_static)
  foreach(t ${lib}_shared ${lib}_static)
    target_include_directories(${t} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  endforeach()
endforeach()
install(TARGETS ${CANOPY_INSTALL_TARGETS} EXPORT canopyTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The CUDA module beside libcanopy.so, where the core looks first; no one links it.
if(TARGET canopy_cuda)
  install(TARGETS canopy_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(TARGETS ${CANOPY_CLI_TARGETS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Installed programs and libraries find canopy's own libraries from where they lie, in
# any prefix, without LD_LIBRARY_PATH (the CLI links canopy statically, canopy-mpi needs
# libmpi from the system; libcanopy_dist.so needs libcanopy.so beside it).
file(RELATIVE_PATH CANOPY_BIN_TO_LIB /p/${CMAKE_INSTALL_BINDIR} /p/${CMAKE_INSTALL_LIBDIR})
# The build tree uses the install run path too: otherwise CMake pads the build's run path
# with ':' to the install path's length for its in-place editor, and each empty entry
# makes the loader search the current directory at every start. Libraries linked from
# outside the system's paths (MPI) keep their folder in it.
set_target_properties(${CANOPY_CLI_TARGETS} PROPERTIES INSTALL_RPATH "$ORIGIN/${CANOPY_BIN_TO_LIB}"
  BUILD_WITH_INSTALL_RPATH ON INSTALL_RPATH_USE_LINK_PATH ON)
foreach(lib ${CANOPY_LIBRARIES})
  set_target_properties(${lib}_shared PROPERTIES INSTALL_RPATH "$ORIGIN" BUILD_WITH_INSTALL_RPATH ON
    INSTALL_RPATH_USE_LINK_PATH ON)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/include/canopy.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/include/canopy)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/canopy DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})

install(EXPORT canopyTargets NAMESPACE canopy:: DESTINATION ${CANOPY_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/canopyConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/canopyConfig.cmake
                              INSTALL_DESTINATION ${CANOPY_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/canopyConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/canopyConfig.cmake ${PROJECT_BINARY_DIR}/canopyConfigVersion.cmake
        DESTINATION ${CANOPY_CMAKE_DIR})

# pkg-config: the prefix is found from the .pc file's own place, so the file stays right
# for `cmake --install --prefix P` (a prefix unknown at configure time).
file(RELATIVE_PATH CANOPY_PC_UP /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
string(REGEX REPLACE "/$" "" CANOPY_PC_UP "${CANOPY_PC_UP}")
get_filename_component(CANOPY_JSONC_DIR ${JSONC_LIBRARY} DIRECTORY)
# A static link needs what libcanopy.a uses; a shared one gets it through libcanopy.so.
# Neither needs CUDA: the GPU backend is a module loaded at run time.
set(CANOPY_PC_LIBS_PRIVATE "-L${CANOPY_JSONC_DIR} -ljson-c ${OpenMP_C_FLAGS} -lm")
foreach(l ${CMAKE_DL_LIBS})
  string(APPEND CANOPY_PC_LIBS_PRIVATE " -l${l}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/canopy.pc.in ${PROJECT_BINARY_DIR}/canopy.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/canopy.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# canopy-dist: the MPI layer on top of canopy; its users compile against the same MPI.
if(CANOPY_HAVE_MPI)
  list(JOIN MPI_C_LIBRARIES " " CANOPY_PC_MPI_LIBS)
  set(CANOPY_PC_MPI_CFLAGS "-DCANOPY_HAVE_MPI=1")
  foreach(d ${MPI_C_INCLUDE_DIRS})
    string(APPEND CANOPY_PC_MPI_CFLAGS " -I${d}")
  endforeach()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/canopy-dist.pc.in ${PROJECT_BINARY_DIR}/canopy-dist.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/canopy-dist.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
