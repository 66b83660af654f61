:- module(etalis_sandbox,
          [ sandbox_check/2,            % +Items, +Earlier
            sandboxed_true/3,           % +Items, +Goals, -True
            item_goal/3,                % +Item, -Goal, -Where
            changed_predicates/2,       % +Items, -Changed
            undefined_predicates/2      % +Items, -Undefined
          ]).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(library(pairs)).
:- use_module(library(sandbox), [safe_goal/1]).
:- use_module('../errors', [etalis_error/3]).
:- use_module('../compiler/operators', [interval_goal/4]).
:- use_module('../compiler/optable', [pattern_parts/3, sub_pattern/3]).
:- use_module('../rdf/knowledge', [knowledge_init/1]).
:- use_module('../compiler/statics', [static_clause/3, define_statics/4]).
:- use_module('../runtime/rule_changes', [rule_update_builtins/1]).
:- use_module(guard, [guard_engine/1, change_goal/2]).
:- use_module('../runtime/protocol', [calling_message/1]).

/** <module> Rule files are code from elsewhere: the sandbox

A rule file is untrusted unless its user says otherwise.  Before
anything of an untrusted file is loaded, sandbox_check/2 proves every
clause of it safe:

  - a static clause may define neither a predicate of another module
    (`user:term_expansion(...) :- ...`), nor a hook of SWI-Prolog
    (a multifile predicate of `user`, `system` or `prolog` such as
    term_expansion/2 or message_hook/3), nor a built-in or library
    predicate, nor one of the engine's own (rdf/3, isa/2, names
    starting with `$`);
  - the body of every static clause (a grammar rule after its pure
    translation by dcg_translate_rule/2) and every `where` condition
    must be proven safe by library(sandbox), with the file's own static
    predicates known: they are asserted into a scratch module that
    nothing calls, which is destroyed afterwards;
  - printing a term to the current output (write/1, print/1, writeq/1,
    write_canonical/1, nl/0, tab/1, as library(sandbox) allows
    writeln/1): a rule's condition or `do` action runs with its output
    on standard error (etalis_runtime:user_goal/1), never into the
    detections;
  - on top of library(sandbox), goals that change what the engines of
    the process share are refused: the database, global variables,
    loading code, flags and halting hooks (forbidden/1); except that
    assert and retract of facts of the file's own predicates (neither
    built-in, library, hook nor the engine's own: checked as a static
    clause's head is) change only that engine's facts.  A fact written
    out in the rule is checked here, and its predicate is dynamic in
    the engine (changed_predicates/2); one known only when the rule
    runs (`functor(F, Name, 1), retract(F)`) is checked then, by the
    engine's own assert and retract (etalis_guard).

Directives never run (compile_items/3 accepts only the engine's own
declarative ones), and static clauses are never term- or
goal-expanded: static_clause/3 translates grammar rules purely.
*/

%!  sandbox_check(+Items, +Earlier) is det.
%
%   Refuse the items of a rule file (see read_etl_file/2) unless every
%   static clause and `where` condition is proven safe.  Earlier are the
%   static items of the engine already loaded (for rules added to a
%   running engine), which the new items may call.  Nothing of Items
%   runs.
%
%   @error etalis_error(Message, Hint) at the clause at fault.

sandbox_check(Items, Earlier) :-
    must_be(list, Items),
    must_be(list, Earlier),
    in_scratch(S, check_in(S, Items, Earlier)).

%!  sandboxed_true(+Items, +Goals, -True) is det.
%
%   True are the Goals (Goal-Where pairs) that succeed, each run once,
%   with the static clauses and dynamic predicates of Items (see
%   read_etl_file/2) loaded in a scratch module, destroyed afterwards.
%   Whether or not the file is trusted, its static clauses and the goals
%   are first proven safe, as sandbox_check/2 proves them; a goal may
%   take at most 1,000,000 inferences.  ETALIS's print_trigger/1
%   defined by a rule is evaluated so, once, when the file is loaded.
%
%   @error etalis_error(Message, Hint) at the clause at fault or at
%   Where of a goal that is not safe, raises an error or does not end.

sandboxed_true(Items, Goals, True) :-
    must_be(list, Items),
    must_be(list, Goals),
    include(static_or_dynamic, Items, Statics),
    in_scratch(S, ( check_in(S, Statics, []),
                    forall(member(Goal-Where, Goals), safe(S, Goal, Where)) )),
    in_scratch(R, ( guard_engine(R),            % before the clauses that call what it guards
                    load_scratch(R, Statics),
                    include(scratch_true(R), Goals, True) )).

%   load_scratch(+Scratch, +Statics): the dynamic declarations and static
%   clauses of Statics, proven safe, in Scratch.

load_scratch(R, Statics) :-
    findall(PI-Where, ( member(directive(dynamic(PIs), Where), Statics), member(PI, PIs) ), Dynamic),
    include(is_static, Statics, Clauses),
    define_statics(R, Dynamic, Clauses, _).

static_or_dynamic(static(_, _)).
static_or_dynamic(directive(dynamic(_), _)).

scratch_true(S, Goal-Where) :-
    catch(call_with_inference_limit(S:Goal, 1_000_000, Result), E, true),
    (   nonvar(E)
    ->  (   E = error(Formal, _) -> true ; Formal = E ),
        format(string(M), "~q raised the error ~q", [Goal, Formal]),
        etalis_error(M, "make the clauses it calls succeed or fail for this argument", Where)
    ;   Result == inference_limit_exceeded
    ->  format(string(M), "~q did not end within 1,000,000 inferences", [Goal]),
        etalis_error(M, "make the clauses it calls end for this argument", Where)
    ;   true
    ).

%   in_scratch(-Scratch, :Goal): run Goal with Scratch a new temporary
%   module that knows the engine's builtins, and destroy it afterwards.

in_scratch(S, Goal) :-
    flag(etalis_sandbox, N, N+1),
    format(atom(S), 'etalis_sandbox_~d', [N]),
    setup_call_cleanup(
        ( set_module(S:class(temporary)),
          dynamic(S:'$undefined'/3),
          knowledge_init(S),
          rule_update_builtins(S) ),
        Goal,
        '$destroy_module'(S)).

check_in(S, Items, Earlier) :-
    declared_dynamic(Items, Declared),
    forall(member(N/A-Where, Declared),
           (   functor(Head, N, A),
               safe_head(S, Head, Where)
           )),
    forall(member(Item, Items), item_shape(S, Item)),
    in_proof(S, Items, Earlier, Checked),
    forall(member(Item, Checked),
           forall(item_goal(Item, Goal0, Where),
                  ( provable_goal(Goal0, Goal),
                    safe(S, Goal, Where) ))),
    forall(member(Item, Checked), exceptions_kept(Item)).

declared_dynamic(Items, Declared) :-
    findall(PIs-Where, member(directive(dynamic(PIs), Where), Items), Dynamic0),
    findall(PI-Where, ( member(PI0-Where, Dynamic0), member(PI, PI0) ), Declared).

%   in_proof(+Scratch, +Items, +Earlier, -Checked): the dynamic
%   predicates and static clauses of Items (after those of Earlier) are
%   in Scratch, as library(sandbox) is to prove them (provable_static/2);
%   Checked are the items whose goals are to be proven, the static
%   clauses first (a static clause at fault is named before the rules
%   calling it).

in_proof(S, Items, Earlier, Checked) :-
    declared_dynamic(Items, Declared),
    changed_predicates(Items, Changed),
    append(Declared, Changed, Dynamic),
    include(is_static, Items, New),
    append(Earlier, New, Statics0),
    maplist(provable_static, Statics0, Statics),
    define_statics(S, Dynamic, Statics, _),
    exclude(is_static, Items, Rules),
    append(New, Rules, Checked).

%!  changed_predicates(+Items, -Changed) is det.
%
%   Changed are the predicates (PI-Where pairs, the first place of
%   each) whose facts the goals of Items (see item_goal/3) assert or
%   retract, written out in the rule: `assert(seen(X))` changes
%   seen/1.  They are the file's own, dynamic in its engine, whether
%   or not the file declares them with `:- dynamic`.

changed_predicates(Items, Changed) :-
    must_be(list, Items),
    findall(PI-Where,
            ( member(Item, Items),
              item_goal(Item, Goal, Where),
              sub_term(G, Goal),
              fact_update(G, PI) ),
            Pairs),
    pairs_keys(Pairs, Keys),
    list_to_set(Keys, PIs),
    findall(PI-Where, ( member(PI, PIs), memberchk(PI-Where, Pairs) ), Changed).

%   provable_static(+Static, -Provable), provable_goal(+Goal, -Provable):
%   what library(sandbox) is asked to prove of a static clause or a
%   goal: an assert or retract of a fact not written out in the rule is
%   left out (true), since library(sandbox) refuses it and the engine's
%   own assert and retract check it when it runs (etalis_guard).

provable_static(Static, static(Provable, Where)) :-
    static_clause(Static, Clause, Where),
    provable_goal(Clause, Provable).

provable_goal(Goal, Provable) :-
    (   var(Goal)
    ->  Provable = Goal
    ;   change_goal(Goal, Fact),
        var(Fact)
    ->  Provable = true
    ;   compound(Goal)
    ->  compound_name_arguments(Goal, Name, Args0),
        maplist(provable_goal, Args0, Args),
        compound_name_arguments(Provable, Name, Args)
    ;   Provable = Goal
    ).

is_static(static(_, _)).

%   item_shape(+Scratch, +Item): what can be told without analysing
%   calls: the head of a static clause, and forbidden goals anywhere.

item_shape(S, Item) :-
    (   Item = static(_, _)
    ->  static_clause(Item, Clause, Where),
        clause_head_body(Clause, Head, _),
        safe_head(S, Head, Where)
    ;   true
    ),
    forall(item_goal(Item, Goal, Where),
           (   forbidden_goal(Goal, S, _, PI)
           ->  refuse_call(PI, none, Where)
           ;   unbounded_goal(Goal, Message)
           ->  etalis_error(Message, "write the bound out in the rule (at most 1,000), or load a file you trust with --trusted (trusted=True in Python)", Where)
           ;   calling_print(Goal)
           ->  etalis_error("sandbox: print_message/2 may not be called by rules from an untrusted source with a \c
                             format that calls a goal (~@) or is not written out in the rule",
                            "print values with ~w, ~q or ~p, as in print_message(warning, format(\"value ~w\", [X])); \c
                             or load a file you trust with --trusted (trusted=True in Python)", Where)
           ;   true
           )).

%   calling_print(+Goal): Goal prints a message written in the rule that
%   would call a goal as it is printed (see calling_message/1); one
%   known only when the rule runs is checked then (see etalis_guard).

calling_print(Goal) :-
    sub_term(G, Goal),
    compound(G),
    G = print_message(_, Message),
    nonvar(Message),
    calling_message(Message),
    !.

%   exceptions_kept(+Item): no goal of Item stops the engine's own
%   exceptions or throws them (escaping_goal/2).

exceptions_kept(Item) :-
    forall(item_goal(Item, Goal, Where),
           (   escaping_goal(Goal, Message)
           ->  etalis_error(Message, "catch only error(Formal, Context) terms and throw terms written out in the rule, such as throw(error(domain_error(positive, X), _)); or load a file you trust with --trusted (trusted=True in Python)", Where)
           ;   true
           )).

%!  item_goal(+Item, -Goal, -Where) is nondet.
%
%   Goal is a goal that Item (see read_etl_file/2) would run, at Where:
%   the body of a static clause, a `where` condition (or `do` action)
%   of a rule.

item_goal(Item, Body, Where) :-
    Item = static(_, _),
    static_clause(Item, Clause, Where),
    clause_head_body(Clause, _, Body).
item_goal(rule(_, _, Pattern, Where, _), Goal, Where) :-
    pattern_goal(Pattern, Goal).

clause_head_body(Clause, Head, Body) :-
    (   nonvar(Clause), Clause = (Head :- Body)
    ->  true
    ;   nonvar(Clause), Clause = M:C, nonvar(C), C = (H :- Body)
    ->  Head = M:H
    ;   Head = Clause,
        Body = true
    ).

%   pattern_goal(+Pattern, -Goal): a goal that Pattern runs: those of
%   its own goal parts (a `where` condition) first, then those of its
%   sub-patterns.

pattern_goal(P, Goal) :-
    pattern_parts(P, _, Parts),
    (   member(_-goal-G, Parts),
        interval_goal(G, _, _, Goal)
    ;   sub_pattern(P, _, S),
        pattern_goal(S, Goal)
    ).

%   safe_head(+Scratch, +Head, +Where): a static clause of an untrusted
%   file defines a predicate of its own.  Scratch holds only what an
%   engine module has before the file's clauses, so whatever is visible
%   there (built-in, library, user or engine predicates) is not the
%   file's own.

safe_head(_, Head, _) :-
    var(Head),
    !.                                  % refused when asserted
safe_head(_, Module:Head, Where) :-
    !,
    indicator(Head, PI),
    format(string(What), "~q:~q, a predicate of module ~q", [Module, PI, Module]),
    refuse_definition(What, Where).
safe_head(S, Head, Where) :-
    callable(Head),
    foreign_predicate(S, Head, Kind),
    !,
    indicator(Head, PI),
    format(string(What), "~q, ~w", [PI, Kind]),
    refuse_definition(What, Where).
safe_head(_, _, _).

foreign_predicate(S, Head, Kind) :-
    (   member(M, [user, system, prolog]),
        predicate_property(M:Head, multifile)
    ->  Kind = "a hook of SWI-Prolog"
    ;   functor(Head, Name, _),
        sub_atom(Name, 0, _, _, $)
    ->  Kind = "the engine's own predicate"
    ;   (   predicate_property(S:Head, visible)
        ;   predicate_property(S:Head, defined)
        )
    ->  predicate_property(S:Head, implementation_module(I)),
        defined_kind(I, S, Kind)
    ).

defined_kind(S, S, "the engine's own predicate") :- !.
defined_kind(M, _, "a built-in predicate") :-
    module_property(M, class(system)),
    !.
defined_kind(_, _, "a library predicate").

refuse_definition(What, Where) :-
    format(string(Msg), "sandbox: rules from an untrusted source may not define ~w", [What]),
    sandbox_error(Msg, Where).

%   Printing a term to the current output is as safe as writeln/1,
%   which library(sandbox) allows: original ETALIS rules print with
%   `do write(...)`.

:- multifile sandbox:safe_primitive/1.

sandbox:safe_primitive(system:write(_)).
sandbox:safe_primitive(system:print(_)).
sandbox:safe_primitive(system:writeq(_)).
sandbox:safe_primitive(system:write_canonical(_)).
sandbox:safe_primitive(system:nl).
sandbox:safe_primitive(system:tab(N)) :-     % bounded: see unbounded_output/2
    integer(N),
    N =< 1000.

%   ETALIS's ins_event_rule/1, del_event_rule/1 and ins_static_rule/1
%   change only the engine's own rules, and what they add is checked
%   like rules added from Python (see etalis_rule_changes:rule_update/2).
%   ETALIS's event/1 raises an event in the engine that runs the rule,
%   fed as its input events are (see etalis_rule_changes:raise_event/2).
%   Both are safe as the module's own predicates call them, for the
%   module itself (the scratch module of the proof): a rule that names
%   another engine's module is refused.

sandbox:safe_primitive(etalis_rule_changes:rule_update(M, _)) :-
    scratch_module(M).
sandbox:safe_primitive(etalis_rule_changes:raise_event(M, _)) :-
    scratch_module(M).

scratch_module(M) :-
    atom(M),
    sub_atom(M, 0, _, _, etalis_sandbox_).

%   safe(+Scratch, +Goal, +Where): library(sandbox) proves Goal safe in
%   the scratch module.

safe(S, Goal, Where) :-
    catch(safe_goal(S:Goal), E, true),
    (   var(E)
    ->  true
    ;   undefined_call(E, S, PI)
    ->  undefined_hint(S, PI, Where, Hint),
        assertz(S:'$undefined'(PI, Where, Hint)),
        dynamic(S:PI),
        safe(S, Goal, Where)
    ;   unsafe(E, Where)
    ).

%   undefined_call(+Error, +Scratch, -PI): Error is library(sandbox)'s
%   for a call of PI, a predicate that nothing defines.  Such a call is
%   safe (it raises an existence error when it runs), so the proof goes
%   on with PI an empty predicate of the scratch module.

undefined_call(error(existence_error(procedure, G), _), S, PI) :-
    (   G = M:_ -> M == S ; true ),
    indicator(G, PI),
    \+ internal(PI),
    \+ ( current_predicate(S:'$undefined'/3), S:'$undefined'(PI, _, _) ).

%!  undefined_predicates(+Items, -Undefined) is det.
%
%   Undefined are the predicates that the goals of Items call and that
%   nothing defines (neither the file, nor SWI-Prolog, nor the engine),
%   as undefined(PI, Where, Hint), Where the first goal calling each and
%   Hint what would define it, as far as the sandbox's proof gets (a
%   goal it refuses ends the proof of its goal).  A call of such a
%   predicate raises an existence error when it runs, which is safe:
%   the sandbox lets it be, and `etalis check` warns of it.

undefined_predicates(Items, Undefined) :-
    must_be(list, Items),
    in_scratch(S, ( catch(in_proof(S, Items, [], Checked), _, Checked = Items),
                    forall(( member(Item, Checked),
                             item_goal(Item, Goal0, Where) ),
                           catch(( provable_goal(Goal0, Goal), safe(S, Goal, Where) ), _, true)),
                    findall(undefined(PI, Where, Hint), S:'$undefined'(PI, Where, Hint), Undefined) )).

%   undefined_hint(+Scratch, +PI, +Where, -Hint): what would define PI,
%   called at Where: a file beside the rule file that defines it (as an
%   original ETALIS test driver consults one), a near predicate of the
%   file, or a static rule.

undefined_hint(S, PI, Where, Hint) :-
    (   defining_files(Where, PI, [File|Files])
    ->  atomic_list_concat([File|Files], ', ', Shown),
        (   Files == [] -> Verb = defines ; Verb = define ),
        format(string(Hint), "~w beside the rule file ~w ~q (an original ETALIS test driver \c
                              consults such a file): give it with --static ~w", [Shown, Verb, PI, File])
    ;   near_predicates(S, PI, [Near|More])
    ->  atomic_list_concat([Near|More], ' or ', Shown),
        format(string(Hint), "did you mean ~w? (the rule file defines it)", [Shown])
    ;   Hint = "define it in the rule file with static rules or facts (original ETALIS examples often load them from a separate .db or .P file: give it with --static FILE), or declare it with :- dynamic(Name/Arity) if it may have no clauses"
    ).

%   forbidden_goal(+Goal, +Scratch, -G, -PI): G, a goal of the predicate
%   PI that library(sandbox) allows but that would change what the
%   engines of this process share, occurs in Goal (as a goal or as data:
%   either is refused); also as a closure that call/N or maplist/N would
%   complete (`call(nb_getval, K, V)`: G is nb_getval, PI nb_getval/2).

forbidden_goal(Goal, S, G, Name/Full) :-
    sub_term(G, Goal),
    callable(G),
    functor(G, Name, Arity),
    forbidden(Name/Full),
    Arity =< Full,
    \+ own_update(S, G),
    !.

%   own_update(+Scratch, +G): G adds or removes a fact of the file's own
%   predicate (one not visible in Scratch, see foreign_predicate/3), or
%   a fact known only when the rule runs, which the engine checks then:
%   a change of the engine's own background facts, which no other
%   engine sees.

own_update(S, G) :-
    change_goal(G, Fact),
    (   var(Fact)
    ->  true
    ;   fact_update(G, N/A),
        functor(Head, N, A),
        \+ foreign_predicate(S, Head, _)
    ).

%   fact_update(+G, -PI): G adds or removes a fact (no clause with a
%   body, no module) of the predicate PI, written out in the goal.

fact_update(G, N/A) :-
    change_goal(G, Fact),
    callable(Fact),
    \+ Fact = (_ :- _),
    \+ Fact = _:_,
    functor(Fact, N, A).

%   forbidden(?PI): library(sandbox) lets a goal change the dynamic
%   predicates and global variables of its own module, load libraries,
%   set some flags and register halt hooks; in an engine that reaches
%   the engine's clauses and stores, other engines and the process.

forbidden(PI) :-
    member(PI, [ assert/1, asserta/1, assertz/1, asserta/2, assertz/2,
                    retract/1, retractall/1, abolish/1, abolish/2, erase/1,
                    recorda/2, recorda/3, recordz/2, recordz/3, flag/3,
                    nb_setval/2, b_setval/2, nb_linkval/2, nb_getval/2, b_getval/2, nb_current/2,
                    use_module/1, use_module/2, ensure_loaded/1, load_files/2, consult/1,
                    set_prolog_flag/2, set_prolog_stack/2, at_halt/1, abort/0, abolish_all_tables/0,
                    sleep/1, portray_text/1, set_portray_text/2, set_portray_text/3
                  ]).

%   unbounded_goal(+Goal, -Message): Goal writes output whose size is
%   only known when the rule runs or is above 1,000 in one step (one
%   inference: the inference limit does not bound it): tab(N), or a
%   format directive with a count, column or precision (`~*c`,
%   `~100000000c`, `~t~1000000|`, `~999999f`).

unbounded_goal(Goal, Message) :-
    sub_term(G, Goal),
    compound(G),
    unbounded_output(G, Message),
    !.

unbounded_output(tab(N), Message) :-
    \+ ( integer(N), N =< 1000 ),
    ( var(N) -> Shown = 'N' ; format(atom(Shown), "~q", [N]) ),
    format(string(Message), "sandbox: tab(~w) may not be called by rules from an untrusted source: \c
                             it writes a number of spaces not written out in the rule, or more than 1,000", [Shown]).
unbounded_output(G, Message) :-
    format_text(G, Format),
    catch(text_to_string(Format, String), _, fail),
    string_codes(String, Codes),
    phrase(unbounded_directive(Directive), Codes, _),
    !,
    functor(G, _, Arity),
    format(string(Message), "sandbox: format/~d with the directive ~s may not be called by rules from an untrusted source: \c
                             its count, column or precision is not written out in the rule, or is more than 1,000",
           [Arity, Directive]).

format_text(format(F), F).
format_text(format(F, _), F).
format_text(format(_, F, _), F).

%   unbounded_directive(-Directive)//: the codes hold a directive of
%   format/2 whose numeric argument is `*` or above 1,000.

unbounded_directive(Directive) -->
    any_codes(_), "~", numeric_argument(Arg), [C],
    { Arg = star -> true ; Arg > 1000 },
    { ( Arg == star -> A = [0'*] ; number_codes(Arg, A) ),
      append([0'~|A], [C], Directive) }.

numeric_argument(star) --> "*", !.
numeric_argument(N) --> digit(D0), digits(Ds), { number_codes(N, [D0|Ds]) }.

digits([D|Ds]) --> digit(D), !, digits(Ds).
digits([]) --> [].

digit(D) --> [D], { code_type(D, digit) }.

any_codes([]) --> [].
any_codes([H|T]) --> [H], any_codes(T).

%   escaping_goal(+Goal, -Message): Goal could stop the engine's own
%   exceptions (the inference limit of an event) or throw them: catch/3
%   with a catcher other than error(_, _) written out in the rule, or
%   throw/1 of a ball not written out, or of one with a meaning to the
%   engine or SWI-Prolog.

escaping_goal(Goal, Message) :-
    sub_term(G, Goal),
    callable(G),
    functor(G, Name, Arity),
    memberchk(Name/Full, [catch/3, catch_with_backtrace/3, throw/1]),
    Arity =< Full,
    \+ harmless_catch_or_throw(G),
    !,
    (   Name == throw
    ->  format(string(Message), "sandbox: throw/1 may not be called by rules from an untrusted source \c
                                 with a ball not written out in the rule, or with '$aborted', unwind(_), \c
                                 time_limit_exceeded or inference_limit_exceeded", [])
    ;   format(string(Message), "sandbox: ~q/~d may not be called by rules from an untrusted source \c
                                 with a catcher other than error(_, _): it would also catch the engine's \c
                                 inference limit", [Name, Full])
    ).

harmless_catch_or_throw(G) :-
    (   G = throw(Ball)
    ->  nonvar(Ball),
        \+ memberchk(Ball, ['$aborted', time_limit_exceeded, inference_limit_exceeded]),
        \+ Ball = unwind(_)
    ;   compound(G),
        functor(G, _, 3),
        arg(2, G, Catcher),
        nonvar(Catcher),
        Catcher = error(_, _)
    ).

unsafe(error(Formal, Context), Where) :-
    (   Formal = permission_error(call, sandboxed, G)
    ->  (   Context = sandbox(_, Path)
        ->  true
        ;   Path = []
        ),
        culprit(G, Path, Culprit),
        indicator(Culprit, PI),
        indicator(G, Inner),
        (   ( Inner == PI ; internal(Inner) )
        ->  refuse_call(PI, none, Where)
        ;   refuse_call(PI, Inner, Where)
        )
    ;   Formal = existence_error(procedure, G)
    ->  indicator(G, PI),
        refuse_call(PI, none, Where)
    ;   Formal = instantiation_error
    ->  sandbox_error("sandbox: the goal calls a goal that is only known when the rule runs (built with =.., read from text, or a variable), which cannot be proven safe", Where)
    ;   format(string(Msg), "sandbox: the goal cannot be proven safe (~q)", [Formal]),
        sandbox_error(Msg, Where)
    ).

%   near_predicates(+Scratch, +PI, -Near): Near (Name/Arity texts) are
%   the predicates the rule file defines (its static rules, in the
%   scratch module) with PI's name and another arity, or with a name
%   one edit (insertion, deletion, change or swap of neighbours) from
%   PI's and its arity: most likely what a call of the undefined PI meant.

near_predicates(S, Name/Arity, Near) :-
    findall(Text,
            ( current_predicate(S:N/A),
              functor(H, N, A),
              \+ predicate_property(S:H, imported_from(_)),
              N/A \== Name/Arity,
              (   N == Name
              ;   A == Arity, one_edit(Name, N)
              ),
              format(string(Text), "~q", [N/A]) ),
            Near0),
    sort(Near0, Near).

one_edit(A, B) :-
    atom_codes(A, As),
    atom_codes(B, Bs),
    one_edit_codes(As, Bs).

one_edit_codes([X|As], [X|Bs]) :- !,
    one_edit_codes(As, Bs).
one_edit_codes([X, Y|T], [Y, X|T]) :- X \== Y, !.   % neighbours swapped
one_edit_codes([_|T], [_|T]) :- !.                   % one changed
one_edit_codes([_|T], T) :- !.                       % one deleted
one_edit_codes(T, [_|T]).                            % one inserted

%   defining_files(+Where, +PI, -Files): Files (names) are the Prolog
%   files beside the rule file of Where (`.db`, `.P`, `.pl`) with a
%   clause for PI, as original ETALIS's test drivers consult them.  The
%   files are only read, term by term.

defining_files(pos(RuleFile, _, _), PI, Files) :-
    atom(RuleFile),
    exists_file(RuleFile),
    file_directory_name(RuleFile, Dir),
    directory_files(Dir, Entries),
    msort(Entries, Sorted),
    include(defines_in(Dir, PI), Sorted, Files).

defines_in(Dir, Name/Arity, Entry) :-
    file_name_extension(_, Ext, Entry),
    memberchk(Ext, [db, 'P', pl]),
    directory_file_path(Dir, Entry, Path),
    exists_file(Path),
    functor(Head, Name, Arity),
    catch(setup_call_cleanup(open(Path, read, In),
                             file_defines(In, Head),
                             close(In)),
          _, fail).

file_defines(In, Head) :-
    repeat,
    read_term(In, T, [syntax_errors(quiet)]),
    (   T == end_of_file
    ->  !, fail
    ;   ( T = (H :- _) -> true ; H = T ),
        \+ H \= Head
    ),
    !.

%   culprit(+Goal, +Parents, -Culprit): of the goals from the rule file
%   down to the refused Goal, the one the file calls: the outermost that
%   does not merely call its argument (catch/3, findall/3, call/N, ...).

culprit(G, Parents, Culprit) :-
    reverse([G|Parents], Outermost),
    (   member(Culprit, Outermost),
        \+ wrapper(Culprit)
    ->  true
    ;   Culprit = G
    ).

wrapper(Goal) :-
    predicate_property(Goal, meta_predicate(Spec)),
    arg(_, Spec, A),
    ( integer(A) ; A == ^ ),
    !.

internal(Name/_) :-
    sub_atom(Name, 0, _, _, $).

refuse_call(PI, Inner, Where) :-
    (   Inner == none
    ->  format(string(Msg), "sandbox: ~q may not be called by rules from an untrusted source", [PI])
    ;   format(string(Msg), "sandbox: ~q may not be called by rules from an untrusted source (it calls ~q)",
               [PI, Inner])
    ),
    sandbox_error(Msg, Where).

sandbox_error(Message, Where) :-
    etalis_error(Message,
                 "rule files are sandboxed: where conditions and static rules may use pure Prolog only (no shell, files, network, database, hooks or loading code); load a file you trust with --trusted (trusted=True in Python)",
                 Where).

indicator(_:G, PI) :- !, indicator(G, PI).
indicator(N/A, N/A) :- !.
indicator(G, N/A) :- functor(G, N, A).
