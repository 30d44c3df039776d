# sebt_mutants: the sebt command built again with SEBT_TEST_FAULTS, so that
# SEBT_TEST_FAULT=NAME plants one of the writer and cache bugs of
# core/test_faults.h (a CSV slice numbered from its window's start, a
# shortest number's last digit dropped, a direct file's tail written from
# its buffer's start, a cached series' volume read from its close column,
# the analysis columns' stop and tp exit counts swapped, and in the
# library's analysis figures the profit factor's sign flipped, the bars in
# the market one short a trade, a year of 365 days; a --where `>=` read
# as `>`; a split's cut and a walk-forward's test window one bar off; and
# in the proof itself, a check that asks for the analysis columns, each
# combo's trades, of a sweep that ran without them, or leaves them out).
# The test shows each is caught by the sweep's own verification, exit 1,
# nothing written. Test-only: never installed; the sebt that ships has no
# such hooks (compiled out).
find_program(SEBT_MUTANTS_BASH bash)
if(BUILD_TESTING AND SEBT_MUTANTS_BASH AND TARGET sebt_cli)
  # The planted files, linked ahead of the libraries that hold the real ones.
  set(_mu_core ${PROJECT_SOURCE_DIR}/core/outfile.c ${PROJECT_SOURCE_DIR}/core/number.c
      ${PROJECT_SOURCE_DIR}/core/series_cache.c ${PROJECT_SOURCE_DIR}/core/sweep.c
      ${PROJECT_SOURCE_DIR}/core/sweep_rows.c ${PROJECT_SOURCE_DIR}/core/metrics.c ${PROJECT_SOURCE_DIR}/core/where.c
      ${PROJECT_SOURCE_DIR}/core/oos.c ${PROJECT_SOURCE_DIR}/core/walkforward.c
      ${PROJECT_SOURCE_DIR}/core/sweep_proof.c)
  # fast_cpu's tallied batch, for the slip in its analysis tally.
  set(_mu_fast ${PROJECT_SOURCE_DIR}/fast_cpu/sweep_run.c)
  # The command's own objects (no cli/ file has a planted bug), compiled once.
  add_executable(sebt_mutants $<TARGET_OBJECTS:sebt_cli> ${_mu_core} ${_mu_fast})
  set_target_properties(sebt_mutants PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  find_package(Threads)
  get_target_property(_mu_libs sebt_cli LINK_LIBRARIES)
  target_link_libraries(sebt_mutants PRIVATE ${_mu_libs} ${CMAKE_DL_LIBS})
  target_compile_definitions(sebt_mutants PRIVATE SEBT_TEST_FAULTS=1 $<TARGET_PROPERTY:sebt_cli,COMPILE_DEFINITIONS>)
  target_include_directories(sebt_mutants PRIVATE $<TARGET_PROPERTY:sebt_cli,INCLUDE_DIRECTORIES>)
  # The planted files as their library compiles them (which number writer,
  # whether the cache is built), in this folder only.
  set_source_files_properties(${_mu_core} PROPERTIES
    COMPILE_DEFINITIONS "$<TARGET_PROPERTY:sebt_core_objects,COMPILE_DEFINITIONS>")
  set_source_files_properties(${_mu_fast} PROPERTIES
    COMPILE_DEFINITIONS "$<TARGET_PROPERTY:sebt_fast_cpu,COMPILE_DEFINITIONS>")
  add_dependencies(sebt_mutants sebt_cli)
  add_test(NAME cli_sweep_mutants
    COMMAND ${SEBT_MUTANTS_BASH} ${CMAKE_CURRENT_LIST_DIR}/mutants_test.sh $<TARGET_FILE:sebt_mutants>
            $<TARGET_FILE:sebt_cli> ${SEBT_FIXTURES_DIR} ${PROJECT_SOURCE_DIR})
  set_tests_properties(cli_sweep_mutants PROPERTIES LABELS cli TIMEOUT 900 SKIP_RETURN_CODE 77)
  # The gate's written-sweep stage on a planted writer bug: the number
  # writer's (every build has it). A whole validate run: slow.
  set(_mu_written ${SEBT_MUTANTS_BASH} ${CMAKE_CURRENT_LIST_DIR}/validate_written_test.sh $<TARGET_FILE:sebt_mutants>
    ${SEBT_FIXTURES_DIR}/data/BTCUSDT-1m-2018-02-08.raw.csv)
  if(SEBT_SANITIZE)
    # Under ASan the run stops at the written sweep's first failed check
    # (--fail-fast); the stages after it, a passing validate's, run in
    # every sanitized validate. The whole run: cli_validate_written_mutants_once,
    # left out of CI's sanitized pass (sanitize_skip, docs/ci.md).
    add_test(NAME cli_validate_written_mutants COMMAND ${_mu_written} fail-fast last_digit_dropped)
    add_test(NAME cli_validate_written_mutants_once COMMAND ${_mu_written} whole last_digit_dropped)
    set_tests_properties(cli_validate_written_mutants_once PROPERTIES LABELS "cli;slow;sanitize_skip" TIMEOUT 900)
  else()
    add_test(NAME cli_validate_written_mutants COMMAND ${_mu_written} whole last_digit_dropped)
  endif()
  set_tests_properties(cli_validate_written_mutants PROPERTIES LABELS "cli;slow" TIMEOUT 900)
endif()
# Slips planted in a walk's analysis tally fail parity and validate; a
# trade-path backend says where its columns come from.
if(BUILD_TESTING AND SEBT_MUTANTS_BASH AND TARGET sebt_mutants)
  set(_mu_cuda_host "")
  if(TARGET sebt_cuda_host)
    set(_mu_cuda_host $<TARGET_FILE:sebt_cuda_host>)
  endif()
  set(_mu_analysis ${SEBT_MUTANTS_BASH} ${CMAKE_CURRENT_LIST_DIR}/analysis_oracle_test.sh $<TARGET_FILE:sebt_mutants>
    $<TARGET_FILE:sebt_cli> ${SEBT_FIXTURES_DIR})
  if(SEBT_SANITIZE)
    # Its two validates (a minute each under ASan) are a ctest of their
    # own, left out of CI's sanitized pass (sanitize_skip, docs/ci.md): the
    # parity runs here fail on the same planted slips under ASan, and
    # validate's parity stage compares the same columns in every sanitized
    # validate of fast_cpu.
    add_test(NAME cli_parity_analysis_mutants COMMAND ${_mu_analysis} parity ${_mu_cuda_host})
    add_test(NAME cli_parity_analysis_mutants_once COMMAND ${_mu_analysis} validate ${_mu_cuda_host})
    set_tests_properties(cli_parity_analysis_mutants_once PROPERTIES LABELS "cli;slow;sanitize_skip" TIMEOUT 600)
  else()
    add_test(NAME cli_parity_analysis_mutants COMMAND ${_mu_analysis} all ${_mu_cuda_host})
  endif()
  set_tests_properties(cli_parity_analysis_mutants PROPERTIES LABELS "cli;slow" TIMEOUT 600)
endif()
# A signal just after the output's rename: the run ends as without it.
if(BUILD_TESTING AND SEBT_MUTANTS_BASH AND TARGET sebt_mutants)
  add_test(NAME cli_signal_commit
    COMMAND ${SEBT_MUTANTS_BASH} ${CMAKE_CURRENT_LIST_DIR}/signal_commit_test.sh $<TARGET_FILE:sebt_mutants>
            $<TARGET_FILE:sebt_cli> ${SEBT_FIXTURES_DIR})
  set_tests_properties(cli_signal_commit PROPERTIES LABELS cli TIMEOUT 300)
endif()
