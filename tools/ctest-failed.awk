# The output of each failed test in a ctest log (--output-on-failure): from
# its "***Failed" (or Timeout, Exception) line up to the next test's line, at
# most 40 lines a test, so that a failure's own message reaches the short
# summary a CI run prints (tools/test-all.sh, tools/test-pocl-versions.sh).
# Usage: awk -f tools/ctest-failed.awk LOG...
/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: .*\*\*\*(Failed|Timeout|Exception)/ {
  print "--- " $0
  on = 1
  n = 0
  next
}
on && (/^ *Start +[0-9]+: / || /^ *[0-9]+\/[0-9]+ Test +#/ || /tests passed, /) { on = 0 }
on && n < 40 && !/^\[----\] *$/ { print; n++ }
