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
