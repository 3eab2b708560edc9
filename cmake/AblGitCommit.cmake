# The source tree's git commit compiled into the binary (build_info.h: abl::build::git_commit()),
# refreshed at every build, not only at configure time: run as `cmake -DSOURCE_DIR=... -DOUTPUT=...
# -P AblGitCommit.cmake`. The file is rewritten only when the commit changes, so an unchanged
# commit recompiles nothing. "-dirty" marks uncommitted changes to tracked files; "unknown" a tree
# without git (a release tarball).
set(commit unknown)
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE AND EXISTS ${SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse HEAD
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0)
    set(commit ${head})
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} diff --quiet HEAD --
                    RESULT_VARIABLE dirty ERROR_QUIET)
    if(NOT dirty EQUAL 0)
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
set(text "// Generated at build time by cmake/AblGitCommit.cmake.\n#include \"abl/core/build_info.h\"\nconst char* abl::build::git_commit() { return \"${commit}\"; }\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUTPUT} "${text}")
endif()
