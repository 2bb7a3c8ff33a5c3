; Definitions and references for Python. Capture names follow the tags
; convention: @definition.<kind> on the whole node with its @name, and
; @reference.<role> on each referencing identifier.

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function

(call function: (identifier) @reference.call)
(call function: (attribute attribute: (identifier) @reference.call))
(argument_list (identifier) @reference.argument)
(argument_list (attribute attribute: (identifier) @reference.argument))
(keyword_argument value: (identifier) @reference.argument)
(decorator (identifier) @reference.decorator)
(decorator (attribute attribute: (identifier) @reference.decorator))
(decorator (call function: (identifier) @reference.decorator))
(type (identifier) @reference.type)
(attribute object: (identifier) @reference.name)
(assignment right: (identifier) @reference.value)
(return_statement (identifier) @reference.value)
(except_clause (identifier) @reference.type)
(import_from_statement name: (dotted_name (identifier) @reference.import))
(import_from_statement name: (aliased_import name: (dotted_name (identifier) @reference.import)))

; Modules a file imports (@import): preferred when a name is defined in several files.
(import_statement name: (dotted_name) @import)
(import_statement name: (aliased_import name: (dotted_name) @import))
(import_from_statement module_name: (_) @import)

; Attributes a definition writes (@write): `o.x = ...`, `o.x += ...`, `a, o.x = ...`, `setattr(o, "x", ...)`,
; `o.__dict__.setdefault("x", ...)`, `o.__dict__["x"] = ...` (the value signal's writers, value_signals.py).
(assignment left: (attribute attribute: (identifier) @write))
(augmented_assignment left: (attribute attribute: (identifier) @write))
(assignment left: (pattern_list (attribute attribute: (identifier) @write)))
(assignment left: (tuple_pattern (attribute attribute: (identifier) @write)))
(call function: (identifier) @_setattr (#eq? @_setattr "setattr")
  arguments: (argument_list . (_) . (string (string_content) @write)))
(call function: (attribute object: (attribute attribute: (identifier) @_dict (#eq? @_dict "__dict__"))
                           attribute: (identifier) @_setdefault (#eq? @_setdefault "setdefault"))
  arguments: (argument_list . (string (string_content) @write)))
(assignment left: (subscript value: (attribute attribute: (identifier) @_dict2 (#eq? @_dict2 "__dict__"))
                             subscript: (string (string_content) @write)))
