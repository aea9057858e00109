#!/usr/bin/env python3
# Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
#
# A pipeline that repeats the options of one of its passes (same names, same
# defaults; Pipelines.h) must hand each of them on. For every option of
# PASS, this sets it on PIPELINE to a value other than its default and checks,
# through --dump-pass-pipeline, that PASS inside the pipeline gets that value
# and that every other option of PASS keeps its default. With no option set,
# PASS inside the pipeline must have the defaults of PASS on its own.
#
#   check-forwarded-options.py HOT_OPT PIPELINE PASS [NAME=VALUE ...]
#
# NAME=VALUE gives the value to try for an option that is neither a boolean
# nor an integer (a string or an enumeration); an option of another kind
# without one is an error, so that a new option cannot go unchecked.
import re
import subprocess
import sys


def pass_options(hot_opt, pipeline, pass_name):
    """The options of `pass_name` in `pipeline` as --dump-pass-pipeline
    prints them, as a dict. The dump comes before the passes run, so a pass
    that rejects the value it was given (on an empty module) still shows it."""
    out = subprocess.run(
        [hot_opt, f"--pass-pipeline=builtin.module({pipeline})",
         "--dump-pass-pipeline", "-o", "/dev/null"],
        input="module {}\n", capture_output=True, text=True)
    found = re.findall(r"(?<![\w-])" + re.escape(pass_name) + r"\{([^}]*)\}",
                       out.stderr)
    if len(found) != 1:
        sys.exit(f"error: {pipeline}: {pass_name} appears {len(found)} times "
                 f"in the dump:\n{out.stderr}")
    return dict(item.split("=", 1) for item in found[0].split())


def other_value(name, default, given):
    if name in given:
        return given[name]
    if default in ("true", "false"):
        return "false" if default == "true" else "true"
    if re.fullmatch(r"-?\d+", default):
        return str(int(default) + 1)
    sys.exit(f"error: option '{name}' (default '{default}') is neither a "
             f"boolean nor an integer: give a value to try as {name}=VALUE")


def main():
    hot_opt, pipeline, pass_name = sys.argv[1:4]
    given = dict(arg.split("=", 1) for arg in sys.argv[4:])
    defaults = pass_options(hot_opt, pass_name, pass_name)
    unknown = set(given) - set(defaults)
    if unknown:
        sys.exit(f"error: {pass_name} has no option {sorted(unknown)}")
    failures = []
    inside = pass_options(hot_opt, pipeline, pass_name)
    if inside != defaults:
        failures.append(f"{pipeline}: {pass_name} gets "
                        f"{sorted(set(inside.items()) - set(defaults.items()))}"
                        f" by default, on its own "
                        f"{sorted(set(defaults.items()) - set(inside.items()))}")
    for name, default in sorted(defaults.items()):
        value = other_value(name, default, given)
        if value == default:
            sys.exit(f"error: the value to try for '{name}' is its default")
        expected = dict(defaults, **{name: value})
        got = pass_options(hot_opt, f"{pipeline}{{{name}={value}}}", pass_name)
        if got != expected:
            diff = sorted(k for k in expected if got.get(k) != expected[k])
            failures.append(f"{pipeline}{{{name}={value}}}: {pass_name} has "
                            + ", ".join(f"{k}={got.get(k)} (expected "
                                        f"{expected[k]})" for k in diff))
        else:
            print(f"forwarded: {pipeline}{{{name}={value}}}")
    for failure in failures:
        print("error: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
