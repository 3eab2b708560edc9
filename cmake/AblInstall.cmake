# Install rules: `cmake --install build --prefix P` (or `make install PREFIX=P`) writes a
# relocatable tree (docs/install.md):
#   P/bin/abliterate
#   P/share/abliterate/            inputs/ (default.ini, demo.ini, prompts/, grids/, markers, README)
#   P/share/abliterate/slurm/      abliterate.sh, sweep.sh, README.md
#   P/share/doc/abliterate/        README.md, docs/*.md
#   P/share/modulefiles/abliterate/<version>.lua   Lmod modulefile (and <version>, Tcl)
# The binary finds its data at <its folder>/../share/abliterate, and the modulefiles find the
# prefix from their own location, so the tree can be moved or copied as a whole. Nothing links
# to libraries of this build: the binary needs only its runtime libraries (MPI, HDF5, ...).
include(GNUInstallDirs)

# The layout the binary expects at run time: bin/ and share/ side by side.
if(NOT CMAKE_INSTALL_BINDIR STREQUAL "bin" OR NOT CMAKE_INSTALL_DATADIR STREQUAL "share")
  message(WARNING "CMAKE_INSTALL_BINDIR=${CMAKE_INSTALL_BINDIR}, CMAKE_INSTALL_DATADIR="
                  "${CMAKE_INSTALL_DATADIR}: abliterate looks for its data in <bin>/../share/abliterate; "
                  "keep bin and share for an installed tree that finds it")
endif()

set(ABL_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/abliterate)
set(ABL_MODULE_DIR ${CMAKE_INSTALL_DATADIR}/modulefiles/abliterate)

# Debian's libraries need no RUNPATH, and a site's MPI and HDF5 come from the same modules at run
# time as at build time. CUDA and NCCL are often outside the loader's path: the installed binary
# keeps their folders in its RUNPATH.
if(ABL_HAVE_CUDA)
  set(ABL_CUDA_RPATH ${CUDAToolkit_LIBRARY_DIR})
  if(NCCL_LIBRARY)
    get_filename_component(nccl_dir ${NCCL_LIBRARY} DIRECTORY)
    list(APPEND ABL_CUDA_RPATH ${nccl_dir})
  endif()
  list(REMOVE_DUPLICATES ABL_CUDA_RPATH)
  set_target_properties(abliterate PROPERTIES INSTALL_RPATH "${ABL_CUDA_RPATH}")
endif()
install(TARGETS abliterate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/inputs/ DESTINATION ${ABL_SHARE_DIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/slurm/abliterate.sh ${PROJECT_SOURCE_DIR}/slurm/sweep.sh
        DESTINATION ${ABL_SHARE_DIR}/slurm)
install(FILES ${PROJECT_SOURCE_DIR}/slurm/README.md DESTINATION ${ABL_SHARE_DIR}/slurm)

file(GLOB ABL_DOCS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${ABL_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The modulefiles are written at install time, when the prefix is known: each finds the prefix
# from its own location and falls back to the prefix it was installed with (a modulefile copied
# into a site's module tree still works). ABL_MODULE_SUFFIX is the folder of the modulefiles
# relative to the prefix, which the modulefiles strip from their own folder.
set(ABL_MODULE_BUILD_DIR ${CMAKE_CURRENT_BINARY_DIR}/modulefiles)
install(CODE "
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  set(ABL_MODULE_SUFFIX \"${ABL_MODULE_DIR}\")
  set(ABL_BIN_SUFFIX \"${CMAKE_INSTALL_BINDIR}\")
  set(ABL_SHARE_SUFFIX \"${ABL_SHARE_DIR}\")
  set(ABL_DOC_SUFFIX \"${CMAKE_INSTALL_DOCDIR}\")
  set(ABL_INSTALL_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/cmake/abliterate.lua.in\"
                 \"${ABL_MODULE_BUILD_DIR}/${PROJECT_VERSION}.lua\" @ONLY)
  configure_file(\"${PROJECT_SOURCE_DIR}/cmake/abliterate.tcl.in\"
                 \"${ABL_MODULE_BUILD_DIR}/${PROJECT_VERSION}\" @ONLY)
")
install(FILES ${ABL_MODULE_BUILD_DIR}/${PROJECT_VERSION}.lua ${ABL_MODULE_BUILD_DIR}/${PROJECT_VERSION}
        DESTINATION ${ABL_MODULE_DIR})
