"""What rules are written with: the registry, the signature DSL, shared helpers (broadcast,
windows, spans, float and value arithmetic) and the generated index. Domain packages sit beside it."""
