"""judge: decide what a captured console means: golden match, verdict, fault, the selftests ' scan."""
