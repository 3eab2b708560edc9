# Every dependency comes from Debian packages (scripts/install-deps.sh installs them).
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Boost 1.71 REQUIRED COMPONENTS program_options)
find_package(MPI REQUIRED COMPONENTS CXX)
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
# Parquet prompt files: gzip and zstd pages (Snappy is decoded in src/io/parquet_codecs.cpp).
find_package(ZLIB REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(OpenMP REQUIRED COMPONENTS CXX)

# Parallel HDF5 (Debian: libhdf5-openmpi-dev). Prefer the MPI flavour explicitly.
set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(WARNING "HDF5 found at ${HDF5_INCLUDE_DIRS} is not the parallel (MPI) build; "
                  "collective writes will be unavailable. Install libhdf5-openmpi-dev.")
endif()
add_library(abl_hdf5 INTERFACE)
target_include_directories(abl_hdf5 INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
target_link_libraries(abl_hdf5 INTERFACE ${HDF5_C_LIBRARIES})
target_compile_definitions(abl_hdf5 INTERFACE ${HDF5_C_DEFINITIONS})
set(ABL_HDF5_TARGET abl_hdf5)
set(ABL_HDF5_PARALLEL ${HDF5_IS_PARALLEL})
