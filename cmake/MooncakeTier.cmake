# mt_add_test(<name> SOURCES <files...> [LIBS <targets...>] [LABELS <labels...>]
#             [TIMEOUT <seconds>] [NO_TSAN])
#
# Builds one gtest binary and registers it with ctest under <name>, with a
# timeout (default 60 s) and labels (default "unit"). Every test goes through
# here so that no test can hang CI.
#
# NO_TSAN: the test runs one thread of the project's code (parsers, a
# single-threaded model walk, a CLI in a child process), so ThreadSanitizer
# has nothing to check in it; a TSAN tree neither builds nor registers it.
function(mt_add_test name)
  cmake_parse_arguments(T "NO_TSAN" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT MOONCAKE_TIER_BUILD_TESTS)
    return()
  endif()
  if(T_NO_TSAN AND MOONCAKE_TIER_TSAN)
    return()
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock
                        GTest::gtest_main Threads::Threads)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT}
                       LABELS "${T_LABELS}")
endfunction()
