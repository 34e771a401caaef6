#!/usr/bin/env bash
# The slow tier of the test suite, kept out of CI (each test builds or checks 5-men tables
# for minutes on 2 cores): the tests of tests/it named `slow_...`, marked #[ignore].
#
#   scripts/slow-tests.sh [LIBTEST OPTIONS...]   e.g. --nocapture, --test-threads 1
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --test it slow_ -- --ignored "$@"
