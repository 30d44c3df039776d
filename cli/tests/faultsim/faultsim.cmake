# sebt_faultsim: the sebt command built again with every malloc, calloc,
# realloc and strdup of our own code (core, backends, oracle, report, CLI)
# routed through cli/tests/faultsim/faultsim.c, which fails the Nth one.
# Test-only: it is never installed. GNU ld's --wrap applies to every object
# and static library linked here, not to shared libraries (libc, libgomp,
# a plugin), whose own allocations are not ours to fail.
find_program(SEBT_FAULTSIM_BASH bash)
if(SEBT_FAULT_INJECTION AND BUILD_TESTING AND SEBT_FAULTSIM_BASH AND TARGET sebt_cli)
  # The command's own objects, compiled once: --wrap acts when they are linked.
  add_executable(sebt_faultsim $<TARGET_OBJECTS:sebt_cli> ${CMAKE_CURRENT_LIST_DIR}/faultsim.c)
  set_target_properties(sebt_faultsim PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  # Read now (every folder has added to it), so target names resolve as targets.
  find_package(Threads)   # sebt_cli links Threads::Threads, an import scoped to its folder
  get_target_property(_fs_libs sebt_cli LINK_LIBRARIES)
  target_link_libraries(sebt_faultsim PRIVATE ${_fs_libs} ${CMAKE_DL_LIBS})
  target_compile_definitions(sebt_faultsim PRIVATE $<TARGET_PROPERTY:sebt_cli,COMPILE_DEFINITIONS>)
  target_include_directories(sebt_faultsim PRIVATE $<TARGET_PROPERTY:sebt_cli,INCLUDE_DIRECTORIES>)
  target_link_options(sebt_faultsim PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup)
  add_dependencies(sebt_faultsim sebt_cli)

  # SEBT_FAULTSIM_BUDGET: the most runs per scenario (0: every allocation,
  # the long run on demand: ctest -R cli_faultsim with -DSEBT_FAULTSIM_BUDGET=0).
  set(SEBT_FAULTSIM_BUDGET 60 CACHE STRING "Fault-injection runs per scenario in cli_faultsim (0: all)")
  add_test(NAME cli_faultsim
    COMMAND ${SEBT_FAULTSIM_BASH} ${CMAKE_CURRENT_LIST_DIR}/faultsim_test.sh $<TARGET_FILE:sebt_faultsim>
            $<TARGET_FILE:sebt_cli> ${SEBT_FIXTURES_DIR} ${SEBT_FAULTSIM_BUDGET})
  set(_fs_labels cli)
  if(SEBT_SANITIZE)
    list(APPEND _fs_labels sanitize)
  endif()
  # The validate scenario (most of the test's time: a validate without a
  # fault, one that goes on past its failure, 11 that stop there) runs in
  # a sanitized build only, where a leak or a bad access on a failed
  # allocation's path is caught too; the plain build runs the sweep and
  # parity scenarios. -DSEBT_FAULTSIM_VALIDATE=ON runs it here too;
  # =sites fails the first call at each of validate's own allocation
  # sites instead, each run stopped in the check it failed in (about
  # 100 s of CPU in a plain build, minutes under ASan: on demand).
  if(SEBT_SANITIZE)
    set(_fs_validate_default ON)
  else()
    set(_fs_validate_default OFF)
  endif()
  option(SEBT_FAULTSIM_VALIDATE "cli_faultsim fails allocations in sebt validate too (default: in a sanitized build)"
         ${_fs_validate_default})
  if(SEBT_FAULTSIM_VALIDATE STREQUAL "sites")
    set(_fs_validate sites)
    set(_fs_cost 100)
  elseif(SEBT_FAULTSIM_VALIDATE)
    set(_fs_validate 1)
    set(_fs_cost 100)
  else()
    set(_fs_validate 0)
    set(_fs_cost 10)
  endif()
  # COST: with its validate scenario among the longest tests of a sanitized
  # pass (731 s in a CI run while each failure ran a whole validate; about
  # a third since), started first under ctest -j so it does not run alone
  # at the end (oracle/tests/CMakeLists.txt).
  set_tests_properties(cli_faultsim PROPERTIES LABELS "${_fs_labels}" TIMEOUT 900 COST ${_fs_cost}
    ENVIRONMENT "SEBT_FAULTSIM_VALIDATE=${_fs_validate};ASAN_OPTIONS=detect_leaks=1;LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/ci/lsan.supp")

  # Validate's written sweep and series cache out of memory (exit 5, no
  # reproducer): the first allocation of the grid's range parse and of the
  # cache's key failed by site, found by name, each run stopped there by
  # --fail-fast (seconds; the =sites run above reaches them in minutes).
  add_test(NAME cli_faultsim_validate_late
    COMMAND ${SEBT_FAULTSIM_BASH} ${CMAKE_CURRENT_LIST_DIR}/validate_stages_test.sh $<TARGET_FILE:sebt_faultsim>
            ${SEBT_FIXTURES_DIR})
  set_tests_properties(cli_faultsim_validate_late PROPERTIES LABELS "${_fs_labels}" SKIP_RETURN_CODE 77
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1;LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/ci/lsan.supp")
endif()
