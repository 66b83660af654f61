:- module(etalis_terms,
          [ term_words/3,               % +Term, +VarNames, -Text
            pattern_functor/1,          % @Term
            type_arity/2,               % ?Type, ?Arity
            control_construct/2,        % @Term, -Name
            not_an_event/2,             % +Term, -What
            reserved_name/1,            % +Term
            static_clause/2,            % +Clause, +Where
            where_goal/3,               % +Goal, +Pos, +Src
            duration_seconds/4,         % +Duration, +VarNames, +Where, -Seconds
            finite_number/1             % @X
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../errors', [etalis_error/3]).
:- use_module('../compiler/optable', [operator/3]).
:- use_module(positions, [pos_where/3]).

/** <module> The terms a rule file is made of

What a term of a rule file may be, each checked where it is written:
an event (no Prolog control, no reserved name), a static clause, a
where condition, a duration; and a term in words, for a message, with
the variable names the rule file gave.
*/

%!  not_an_event(+Term, -What) is semidet.
%
%   Term is callable but cannot be an event (nor a fact or the head of a
%   rule); What says what it is.

not_an_event(Term, What) :-
    control_construct(Term, Name),
    !,
    format(string(What), "Prolog control (~w)", [Name]).
not_an_event([], "the empty list []") :- !.
not_an_event([_|_], "a list") :- !.
not_an_event({_}, "a term in braces {...}") :- !.
not_an_event(_:_, "a module-qualified term (M:G)").

%!  static_clause(+Clause, +Where) is det.
%
%   Clause, at Where, can be a static clause of a rule file: a fact or a
%   Prolog rule with a head that is an atom or a compound term, not an
%   event pattern without its head.
%
%   @error etalis_error(Message, Hint) at Where otherwise.

static_clause(Clause, Where) :-
    (   var(Clause)
    ->  etalis_error("a clause cannot be a variable", "remove it", Where)
    ;   \+ callable(Clause)
    ->  term_words(Clause, [], Words),
        format(string(M), "~w is not a rule, a fact or a directive", [Words]),
        etalis_error(M, "end each clause with a full stop", Where)
    ;   clause_head(Clause, Head), var(Head)
    ->  etalis_error("the head of a rule cannot be a variable",
                     "write e.g. warm(T) :- T > 20.", Where)
    ;   clause_head(Clause, Head), \+ callable(Head)
    ->  term_words(Head, [], Words),
        format(string(M), "the head of a rule must be an atom or a compound term, not ~w", [Words]),
        etalis_error(M, "write e.g. warm(T) :- T > 20.", Where)
    ;   clause_head(Clause, Head), not_an_event(Head, What)
    ->  format(string(M), "~w cannot be a fact or the head of a rule", [What]),
        etalis_error(M, "a fact is an atom or a compound term such as station(kjfk); write Prolog control only in a rule's body", Where)
    ;   Clause = (Head :- _), callable(Head), \+ control_construct(Head, _)
    ->  (   Clause = (_ :- Body), rule_update_goal(Body, Update)
        ->  rule_update_error(Update, Where)
        ;   true
        )
    ;   pattern_functor(Clause)
    ->  (   leftmost_comparison(Clause, Op)
        ->  format(string(Hint), "the head and the pattern are joined by ~w: write <- (Head <- Pattern.)",
                   [Op])
        ;   Hint = "write an event rule: Head <- Pattern."
        ),
        etalis_error("an event pattern without a head", Hint, Where)
    ;   true
    ).

%   leftmost_comparison(+Pattern, -Op): the leftmost operand of Pattern is
%   a comparison H Op P (`alarm(X) < hot(X) seq smoke(X)`), most likely
%   a rule whose arrow lost its dash.

leftmost_comparison(Pattern, Op) :-
    compound(Pattern),
    compound_name_arguments(Pattern, Name, [Left|_]),
    (   memberchk(Name, [<, =<, =, ==, -])
    ->  Op = Name
    ;   pattern_functor(Pattern),
        leftmost_comparison(Left, Op)
    ).

%!  term_words(+Term, +VarNames, -Text) is det.
%
%   Term as the rule file wrote it, with the variable names VarNames
%   (`Name = Var`, as read_term/2 gives them; `_` for the others), and
%   at most a few levels deep.

term_words(Term, VarNames, Text) :-
    copy_term(Term-VarNames, T-Names),
    maplist([Name = V]>>(var(V) -> V = '$VAR'(Name) ; true), Names),
    term_variables(T, Anonymous),
    maplist(=('$VAR'('_')), Anonymous),
    with_output_to(string(Text),
                   write_term(T, [quoted(true), numbervars(true), max_depth(6),
                                  portray(false), module(etalis_syntax)])).

clause_head((Head :- _), Head) :- !.
clause_head(Head, Head).

%!  pattern_functor(@Term) is semidet.
%
%   Term is built by an event operator (`seq`, `and`, `or`, `cnot`,
%   `where`, `within`, `iteration`, `any`, `aggregate`, ...).

pattern_functor(Term) :-
    compound(Term),
    compound_name_arity(Term, Name, Arity),
    (   operator(Name, op(_, Type), Meaning),
        Meaning \== rule,
        Meaning \== same_as(<-),
        type_arity(Type, Arity)
    ;   operator(Name, functor(Arity), _)
    ),
    !.

%!  type_arity(?Type, ?Arity) is nondet.
%
%   An operator of the op/3 type Type takes Arity operands.

type_arity(Type, 2) :- infix(Type).
type_arity(Type, 1) :- memberchk(Type, [xf, yf, fx, fy]).

infix(xfx).
infix(xfy).
infix(yfx).

%!  reserved_name(+Term) is semidet.
%
%   The name of Term starts with `$`, which the reader keeps for hidden
%   events.

reserved_name(Term) :-
    functor(Term, Name, _),
    sub_atom(Name, 0, _, _, $).

%!  control_construct(@Term, -Name) is semidet.
%
%   Term is Prolog control (`!`, `,`, `;`, `->`, `*->`, `\+`, `|`) of
%   the name Name.

control_construct(Term, Name) :-
    callable(Term),
    functor(Term, Name, Arity),
    memberchk(Name/Arity, [!/0, (',')/2, (;)/2, (->)/2, (*->)/2, (\+)/1, ('|')/2]).

%!  where_goal(+Goal, +Pos, +Src) is det.
%
%   Goal can be a where condition.

where_goal(Goal, GP, Src) :-
    pos_where(GP, Src, Where),
    (   var(Goal)
    ->  etalis_error("a where condition cannot be a variable",
                     "write a Prolog goal, e.g. where X > 10", Where)
    ;   \+ callable(Goal)
    ->  term_words(Goal, [], Words),
        format(string(M), "a where condition must be a Prolog goal, not ~w", [Words]),
        etalis_error(M, "write a Prolog goal, e.g. where X > 10", Where)
    ;   rule_update_goal(Goal, Update)
    ->  rule_update_error(Update, Where)
    ;   true
    ).

%   rule_update_goal(+Goal, -Update): Goal calls, through Prolog
%   control, original ETALIS's del_static_rule/1, which etalis-py does
%   not take over (ins_event_rule/1, del_event_rule/1 and
%   ins_static_rule/1 are the engine's, see etalis_runtime:rule_update_builtins/1).

rule_update_goal(Goal, Update) :-
    callable(Goal),
    (   control_construct(Goal, _)
    ->  Goal =.. [_|Args],
        member(Arg, Args),
        rule_update_goal(Arg, Update)
    ;   functor(Goal, Name, 1),
        Name == del_static_rule
    ->  Update = Name/1
    ).

rule_update_error(Update, Where) :-
    format(string(M), "~w (original ETALIS's removal of a static clause by a running rule) is not supported", [Update]),
    etalis_error(M, "static rules stay; keep changing facts in a predicate declared :- dynamic(Name/Arity) with retract/1, or remove rules with del_event_rule(Label)", Where).

%!  duration_seconds(+Duration, +VarNames, +Where, -Seconds) is det.
%
%   Seconds is the length of Duration: a number of seconds, or
%   milliseconds(N), seconds(N), minutes(N), hours(N) or days(N).
%   VarNames name the variables of Duration in a message.

duration_seconds(D, _, Where, _) :-
    var(D),
    !,
    etalis_error("a window must be a known duration, not a variable",
                 "write e.g. within 30, within minutes(5), within hours(3)", Where).
duration_seconds(D, VarNames, Where, Seconds) :-
    (   number(D)
    ->  Seconds = D
    ;   compound(D), D =.. [Unit, N], number(N), unit_seconds(Unit, S)
    ->  catch(Seconds is N*S, error(evaluation_error(_), _), Seconds = D)
    ;   term_words(D, VarNames, Words),
        format(string(M), "~w is not a duration", [Words]),
        etalis_error(M, "write seconds as a number, or milliseconds(N), seconds(N), minutes(N), hours(N) or days(N)", Where)
    ),
    (   \+ finite_number(Seconds)
    ->  term_words(D, VarNames, Words),
        format(string(M), "~w is not a finite duration", [Words]),
        etalis_error(M, "write a window of a finite number of seconds", Where)
    ;   Seconds >= 0
    ->  true
    ;   etalis_error("a window cannot be negative", "use a duration of zero or more", Where)
    ).

%!  finite_number(@X) is semidet.
%
%   X is a number, neither infinite nor NaN.

finite_number(X) :-
    number(X),
    \+ ( float(X), float_class(X, Class), memberchk(Class, [infinite, nan]) ).

unit_seconds(milliseconds, 0.001).
unit_seconds(seconds, 1).
unit_seconds(minutes, 60).
unit_seconds(hours, 3600).
unit_seconds(days, 86400).
