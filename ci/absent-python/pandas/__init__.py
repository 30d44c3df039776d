# Stands in for a Python package that is not installed (ci/test.sh, the
# build with every optional part absent): importing it fails as it would.
raise ModuleNotFoundError("pandas is absent in this CI step (ci/absent-python)")
