# CPack: `cpack -G DEB` in the build folder packs the install tree (cmake/AblInstall.cmake) into
# a Debian package installing into /usr: /usr/bin/abliterate, /usr/share/abliterate/, the docs
# in /usr/share/doc/abliterate/ and the modulefiles in /usr/share/modulefiles/abliterate/.
# Meant for CPU builds (configure with -DABL_CUDA=OFF -DABL_NATIVE=OFF): Depends is worked out by
# dpkg-shlibdeps from the libraries the binary links (Open MPI, parallel HDF5, Boost, fmt, PCRE2,
# utf8proc, libgomp, ...), plus openmpi-bin for mpirun. CUDA's libraries come from no Debian
# package, so GPU sites build from source or use the container (docs/install.md).
set(CPACK_PACKAGE_NAME abliterate)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "abliterate")
if(NOT CPACK_PACKAGE_CONTACT)  # the Maintainer field; -DCPACK_PACKAGE_CONTACT="Name <mail>" sets yours
  set(CPACK_PACKAGE_CONTACT "abliterate maintainers")
endif()
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Refusal directions of decoder LLMs and the ablation that removes refusals (MPI, HDF5)")
set(CPACK_PACKAGE_DESCRIPTION
    "abliterate finds the refusal directions of a Hugging Face decoder LLM from its residual \
stream and searches for the directional ablation that removes refusals while changing the \
model least (KL divergence), as an MPI batch application for Slurm clusters, with the default \
prompt sets, configs, Slurm scripts and modulefiles.")
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_GENERATOR DEB)
set(CPACK_SOURCE_GENERATOR "")

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # abliterate_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "openmpi-bin")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(ABL_HAVE_CUDA)
  # CUDA's libraries (libcudart, libcublas, libnccl) come from no Debian package: dpkg-shlibdeps
  # takes them as private to the package and lists only the Debian libraries; the target machine
  # needs the CUDA toolkit's runtime where the binary's RUNPATH points.
  get_filename_component(abl_nccl_dir "${NCCL_LIBRARY}" DIRECTORY)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR} ${abl_nccl_dir})
  message(STATUS "CPack: CUDA build: the .deb needs the CUDA runtime (${CUDAToolkit_LIBRARY_DIR}) on the target "
                 "besides its Depends (a .deb to hand out is a -DABL_CUDA=OFF build; docs/install.md)")
endif()
if(ABL_NATIVE)
  message(STATUS "CPack: ABL_NATIVE=ON: a package built now runs only on CPUs like this one "
                 "(-DABL_NATIVE=OFF for one to hand out)")
endif()

include(CPack)
