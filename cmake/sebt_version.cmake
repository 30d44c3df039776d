# Run at every build (cmake -P): writes the build's git commit into
# OUT (a C header) only when it changed, so an unchanged commit rebuilds
# nothing. Without git, or outside a checkout, the commit is "unknown".
# Inputs: SRC (the source tree), OUT.
set(commit "unknown")
set(dirty "")
find_program(GIT_PROGRAM git)
if(GIT_PROGRAM)
  execute_process(COMMAND ${GIT_PROGRAM} -C ${SRC} rev-parse HEAD
    OUTPUT_VARIABLE out RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND out)
    set(commit "${out}")
    # Plumbing only: git status would rewrite the index of a tree other
    # people are working in.
    execute_process(COMMAND ${GIT_PROGRAM} -C ${SRC} diff-index --quiet HEAD --
      RESULT_VARIABLE drc OUTPUT_QUIET ERROR_QUIET)
    if(NOT drc EQUAL 0)
      set(dirty " (with uncommitted changes)")
    endif()
  endif()
endif()
set(text "/* Written by cmake/sebt_version.cmake at build time. */\n#define SEBT_GIT_COMMIT \"${commit}${dirty}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
