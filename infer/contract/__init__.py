"""What a rule is given and promises: ``Signature`` (formals, type constraints), a node's
attributes, ``RuleContext`` (the one door from a rule to the run) and the bounds on its claims.
Both the rules (``signatures``) and the walk stand on it."""
