; Definitions and references for TypeScript (and TSX).

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(function_signature name: (identifier) @name) @definition.function
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.type
(method_definition name: (property_identifier) @name) @definition.method
(method_signature name: (property_identifier) @name) @definition.method
(abstract_method_signature name: (property_identifier) @name) @definition.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function
(assignment_expression
  left: (member_expression property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.function
(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function

(call_expression function: (identifier) @reference.call)
(call_expression function: (member_expression property: (property_identifier) @reference.call))
(new_expression constructor: (identifier) @reference.class)
(arguments (identifier) @reference.argument)
(extends_clause value: (identifier) @reference.class)
(implements_clause (type_identifier) @reference.type)
(type_annotation (type_identifier) @reference.type)
(generic_type name: (type_identifier) @reference.type)
(member_expression object: (identifier) @reference.name)
(shorthand_property_identifier) @reference.name
(pair value: (identifier) @reference.value)
(return_statement (identifier) @reference.value)
(import_specifier name: (identifier) @reference.import)

; Modules a file imports (@import): preferred when a name is defined in several files.
(import_statement source: (string) @import)
(export_statement source: (string) @import)
(call_expression
  function: (identifier) @_require
  arguments: (arguments (string) @import)
  (#eq? @_require "require"))

; Test-runner callbacks (node:test, jest, mocha): `it("adds", () => ...)` is a test named "adds";
; `describe("math", ...)` holds tests as a class holds methods.
(call_expression
  function: (identifier) @_test
  arguments: (arguments . (string (string_fragment) @name) . [(arrow_function) (function_expression)])
  (#match? @_test "^(it|test|specify)$")) @definition.function
(call_expression
  function: (identifier) @_suite
  arguments: (arguments . (string (string_fragment) @name) . [(arrow_function) (function_expression)])
  (#match? @_suite "^(describe|suite|context)$")) @definition.class

; Properties a definition writes (@write): `o.x = ...`, `o.x += ...`, `o.x++` (value_signals.py).
(assignment_expression left: (member_expression property: (property_identifier) @write))
(augmented_assignment_expression left: (member_expression property: (property_identifier) @write))
(update_expression argument: (member_expression property: (property_identifier) @write))
