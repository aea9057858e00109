// RUN: hot-opt %s --split-input-file --hot-report="output=/dev/null" -verify-diagnostics
// RUN: not hot-opt %s --split-input-file --hot-report="output=/dev/full" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FULL
// RUN: not hot-opt %s --hot-report="format=csv" 2>&1 | FileCheck %s --check-prefix=FORMAT

// hot-report reads the hot.layers records the rewrite leaves on a function;
// IR written or edited by hand may hold anything there. A record it cannot
// read is an error at the function, never a crash; so is an output it cannot
// write.
// FULL: error: hot-report: cannot write '/dev/full': No space left on device
// FORMAT: for the --format option: Cannot find option named 'csv'!

// expected-error @below {{hot-report: record 0 of 'hot.layers' is malformed: no string 'name'}}
func.func @empty_record() attributes {hot.layers = [{}]} {
  return
}

// -----

// expected-error @below {{hot-report: record 1 of 'hot.layers' is malformed: not a dictionary}}
func.func @not_a_dictionary() attributes {hot.layers = [{name = "fc", tokens = array<i64: 4>, out_features = 2 : i64, in_features = 3 : i64, gw = {rewritten = false, reason = "kept"}}, 1]} {
  return
}

// -----

// expected-error @below {{hot-report: record 0 of 'hot.layers' is malformed: 'gw' has block 0, not a power of two}}
func.func @zero_block() attributes {hot.layers = [{name = "fc", tokens = array<i64: 4>, out_features = 2 : i64, in_features = 3 : i64, gw = {rewritten = true, hla = true, block = 0 : i64, rank = 1 : i64, bits = 8 : i64}}]} {
  return
}

// -----

// expected-error @below {{hot-report: record 0 of 'hot.layers' is malformed: 'tokens' is not a non-empty array of positive sizes}}
func.func @zero_tokens() attributes {hot.layers = [{name = "fc", tokens = array<i64: 0>, out_features = 2 : i64, in_features = 3 : i64, gw = {rewritten = false, reason = "kept"}}]} {
  return
}

// -----

// expected-error @below {{hot-report: record 0 of 'hot.layers' is malformed: 'gx' is not rewritten and gives no 'reason'}}
func.func @no_reason() attributes {hot.layers = [{name = "fc", tokens = array<i64: 4>, out_features = 2 : i64, in_features = 3 : i64, gx = {rewritten = false}, gw = {rewritten = false, reason = "kept"}}]} {
  return
}

// -----

// A well-formed record: reported (no diagnostic).
func.func @well_formed() attributes {hot.layers = [{name = "fc", tokens = array<i64: 4>, out_features = 2 : i64, in_features = 3 : i64, gw = {rewritten = false, reason = "kept"}}]} {
  return
}

// -----

// A frozen layer has a gx and no gw; a record with neither is no layer.
// expected-error @below {{hot-report: record 0 of 'hot.layers' is malformed: neither 'gx' nor 'gw'}}
func.func @no_product() attributes {hot.layers = [{name = "fc", tokens = array<i64: 4>, out_features = 2 : i64, in_features = 3 : i64}]} {
  return
}
