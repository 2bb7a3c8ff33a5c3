; Definitions and references for Rust. Methods are functions inside an impl
; or trait; the indexer names them "Type.method".

(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.class
(enum_item name: (type_identifier) @name) @definition.class
(union_item name: (type_identifier) @name) @definition.class
(trait_item name: (type_identifier) @name) @definition.interface
(impl_item type: (type_identifier) @name) @definition.impl
(impl_item type: (generic_type type: (type_identifier) @name)) @definition.impl
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(type_item name: (type_identifier) @name) @definition.type

(call_expression function: (identifier) @reference.call)
(call_expression function: (field_expression field: (field_identifier) @reference.call))
(call_expression function: (scoped_identifier name: (identifier) @reference.call))
(call_expression function: (generic_function function: (identifier) @reference.call))
(macro_invocation macro: (identifier) @reference.call)
(arguments (identifier) @reference.argument)
(scoped_identifier path: (identifier) @reference.name)
(scoped_type_identifier path: (identifier) @reference.name)
(struct_expression name: (type_identifier) @reference.class)
(type_arguments (type_identifier) @reference.type)
(parameter type: (type_identifier) @reference.type)
(function_item return_type: (type_identifier) @reference.type)
(field_declaration type: (type_identifier) @reference.type)
(impl_item trait: (type_identifier) @reference.type)
(use_declaration argument: (scoped_identifier name: (identifier) @reference.import))
(use_list (identifier) @reference.import)
(use_as_clause path: (scoped_identifier name: (identifier) @reference.import))
(token_tree (identifier) @reference.argument)

; Modules a file uses (@import): preferred when a name is defined in several files.
(use_declaration argument: (_) @import)
(mod_item name: (identifier) @import)

; Fields a definition writes (@write): `s.x = ...`, `s.x += ...` (value_signals.py).
(assignment_expression left: (field_expression field: (field_identifier) @write))
(compound_assignment_expr left: (field_expression field: (field_identifier) @write))
