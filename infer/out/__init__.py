"""What a run gives back: the result object, annotated models, explanations, the HTML report,
the conformance statement, and the one writer of output files."""
