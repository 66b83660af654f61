:- module(etalis_syntax,
          [ read_etl_file/2,            % +File, -Items
            read_etl_string/3,          % +Text, +Source, -Items
            etl_operator/3,             % ?Priority, ?Type, ?Name
            temporal_operator/1,        % ?Name
            etalis_error/3,             % +Message, +Hint, +Where
            syntax_message/2,           % +What, -Message
            duration_seconds/3,         % +Duration, +Where, -Seconds
            pattern_text/2,             % +Pattern, -Text
            pattern_functor/1           % @Term
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).

/** <module> Reading ETALIS Language for Events (.etl) files

An `.etl` file is read with SWI-Prolog's own reader and the ETALIS
operator table below, so a file that original ETALIS accepts (written
with unquoted operators) reads the same here.  Unlike ETALIS, `*`, `#`,
`/\` and `\/` keep their Prolog meaning, so `W2 >= W1 * 1.1` in a
`where` condition is arithmetic.

Each clause of the file becomes one item:

  - rule(Label, Head, Pattern, Where, VarNames)
    An event rule `Head <- Pattern` or `Label : Head <- Pattern`.
    Pattern is validated and normalised into the pattern language:
    `event(E)`, `op(Op, P, Q)` for the temporal binary operators,
    `or(P, Q)`, `cnot(P, C)`, `fnot(P, C)`, `where(P, Goal)`, `within(P, Seconds)` and
    aggregate(Fun, X, P, Window, Result); `iteration(P, N)` is unrolled
    into a sequence.
  - static(Clause, Where)
    A static Prolog rule or fact: background knowledge.
  - directive(Directive, Where)

Where is `pos(Source, Line, Column)` (both 1-based).  All errors are
thrown as error(etalis_error(Message, Hint), pos(Source, Line, Column)).
*/

%!  etl_operator(?Priority, ?Type, ?Name) is nondet.
%
%   The operator table of the ETALIS Language for Events.  The event
%   operators bind tighter than `where` and `within`; `seq` and the Allen
%   relations bind tightest.

etl_operator(1200, xfx, <-).
etl_operator(1150, xfx, where).
etl_operator(1140, xfx, within).
etl_operator(1130, yfx, or).
etl_operator(1120, yfx, par).
etl_operator(1110, yfx, and).
etl_operator(1060, xfx, cnot).
etl_operator(1060, xfx, fnot).
etl_operator(1040, yfx, seq).
etl_operator(1040, xfx, Allen) :-
    allen_relation(Allen).

allen_relation(before).
allen_relation(after).
allen_relation(meets).
allen_relation(met_by).
allen_relation(overlaps).
allen_relation(overlapped_by).
allen_relation(starts).
allen_relation(started_by).
allen_relation(during).
allen_relation(contains).
allen_relation(finishes).
allen_relation(finished_by).
allen_relation(equals).

%!  temporal_operator(?Name) is nondet.
%
%   Name is a binary event operator whose result depends on the
%   intervals of both operands (`seq`, `and`, `par` and the 13 Allen
%   relations).

temporal_operator(seq).
temporal_operator(and).
temporal_operator(par).
temporal_operator(Allen) :-
    allen_relation(Allen).

:- forall(etl_operator(P, T, N), op(P, T, N)).

%!  pattern_text(+Pattern, -Text) is det.
%
%   Text shows the pattern term Pattern (written with the event
%   operators, e.g. `a(X) seq b(X)`) as a rule file would, variables as
%   A, B, ... (`_` for those that occur once).

pattern_text(Pattern, Text) :-
    copy_term(Pattern, T),
    numbervars(T, 0, _, [singletons(true)]),
    with_output_to(string(Text), write_pattern(T, 1200)).

write_pattern(T, Max) :-
    compound(T),
    compound_name_arguments(T, Op, [L, R]),
    etl_operator(P, Type, Op),
    !,
    argument_priorities(Type, P, LP, RP),
    (   P > Max -> write('(') ; true ),
    write_pattern(L, LP),
    format(" ~w ", [Op]),
    write_pattern(R, RP),
    (   P > Max -> write(')') ; true ).
write_pattern(T, Max) :-
    write_term(T, [quoted(true), numbervars(true), spacing(next_argument),
                   priority(Max), module(etalis_syntax)]).

argument_priorities(xfx, P, A, A) :- A is P - 1.
argument_priorities(yfx, P, P, A) :- A is P - 1.
argument_priorities(xfy, P, A, P) :- A is P - 1.

%!  read_etl_file(+File, -Items) is det.
%
%   Read all items of the rule file File.
%
%   @error existence_error(source_sink, File) if File does not exist.
%   @error etalis_error(Message, Hint) with the position of the problem.

read_etl_file(File, Items) :-
    must_be(atom, File),
    (   exists_file(File)
    ->  true
    ;   existence_error(source_sink, File)
    ),
    read_file_to_string(File, Text, [encoding(utf8)]),
    read_etl_string(Text, File, Items).

%!  read_etl_string(+Text, +Source, -Items) is det.
%
%   Read all items of Text; Source names it in positions and errors.

read_etl_string(Text, Source, Items) :-
    must_be(string, Text),
    line_starts(Text, Lines),
    setup_call_cleanup(
        open_string(Text, In),
        read_items(In, src(Source, Text, Lines), Items),
        close(In)).

read_items(In, Src, Items) :-
    read_item_term(In, Src, Term, Pos, VarNames),
    (   Term == end_of_file
    ->  Items = []
    ;   item(Term, Pos, VarNames, Src, Item),
        Items = [Item|Rest],
        read_items(In, Src, Rest)
    ).

read_item_term(In, Src, Term, Pos, VarNames) :-
    catch(read_term(In, Term,
                    [ subterm_positions(Pos),
                      variable_names(VarNames),
                      module(etalis_syntax),
                      syntax_errors(error)
                    ]),
          error(syntax_error(What), Context),
          syntax_error(What, Context, Src)).

syntax_error(What, Context, Src) :-
    Src = src(_, Text, _),
    syntax_error_offset(Context, Text, Offset),
    offset_where(Offset, Src, Where),
    syntax_message(What, Message),
    etalis_error(Message,
                 "check the operators and parentheses, and end each clause with a full stop",
                 Where).

syntax_error_offset(stream(_, _, _, CharNo), _, CharNo) :- !.
syntax_error_offset(string(_, CharNo), _, CharNo) :- !.
syntax_error_offset(_, _, 0).

%!  syntax_message(+What, -Message) is det.
%
%   Message says in words what the reader's syntax_error(What) means.

syntax_message(What, Message) :-
    (   syntax_words(What, Body)
    ->  true
    ;   atom(What)
    ->  atomic_list_concat(Words, '_', What),
        atomic_list_concat(Words, ' ', Body)
    ;   format(string(Body), "~w", [What])
    ),
    format(string(Message), "syntax error: ~w", [Body]).

syntax_words(end_of_clause, "unexpected end of clause").
syntax_words(end_of_clause_expected, "end of clause (a full stop) expected").
syntax_words(end_of_file, "unexpected end of file").
syntax_words(cannot_start_term, "a term cannot start here").
syntax_words(operator_balance, "unbalanced operator").
syntax_words(end_of_file_in_quoted(Quote), Words) :-
    format(string(Words), "a quote (~w) is never closed", [Quote]).
syntax_words(end_of_file_in_block_comment, "a block comment (/*) is never closed").

%!  etalis_error(+Message, +Hint, +Where) is det.
%
%   Throw an error about a rule file: Message says what is wrong, Hint
%   how to fix it, Where is pos(Source, Line, Column).

etalis_error(Message, Hint, Where) :-
    throw(error(etalis_error(Message, Hint), Where)).

%   Classify one clause of the file.

item((:- Directive), Pos, _, Src, directive(Directive, Where)) :-
    !,
    pos_where(Pos, Src, Where),
    (   var(Directive)
    ->  etalis_error("a directive cannot be a variable", "write e.g. :- policy(recent).", Where)
    ;   true
    ).
item((Left <- Body), Pos, VarNames, Src, rule(Label, Head, Pattern, Where, VarNames)) :-
    !,
    b_setval(etalis_var_names, VarNames),
    pos_where(Pos, Src, Where),
    pos_args(Pos, [LeftPos, BodyPos]),
    rule_left(Left, LeftPos, Src, Label, Head),
    pattern(Body, BodyPos, Src, Pattern).
item(Clause, Pos, _, Src, static(Clause, Where)) :-
    pos_where(Pos, Src, Where),
    static_clause(Clause, Where).

rule_left(Left, Pos, Src, Label, Head) :-
    (   nonvar(Left), Left = (Label0 : Head0)
    ->  pos_args(Pos, [LabelPos, HeadPos]),
        (   atom(Label0)
        ->  Label = Label0
        ;   pos_where(LabelPos, Src, W),
            etalis_error("a rule label must be an atom", "write e.g. my_rule : h(X) <- a(X) seq b(X).", W)
        ),
        rule_head(Head0, HeadPos, Src, Head)
    ;   Label = '',
        rule_head(Left, Pos, Src, Head)
    ).

rule_head(Head, Pos, Src, Head) :-
    pos_where(Pos, Src, Where),
    (   var(Head)
    ->  etalis_error("the head of an event rule cannot be a variable",
                     "write the complex event, e.g. alarm(X) <- a(X) seq b(X).", Where)
    ;   \+ callable(Head)
    ->  format(string(M), "the head of an event rule must be an event, not ~q", [Head]),
        etalis_error(M, "an event is an atom or a compound term such as alarm(X)", Where)
    ;   pattern_functor(Head)
    ->  etalis_error("the head of an event rule must be a single event, not a pattern",
                     "put the pattern on the right of <-", Where)
    ;   reserved_name(Head)
    ->  etalis_error("event names starting with $ are reserved", "rename the event", Where)
    ;   true
    ).

static_clause(Clause, Where) :-
    (   var(Clause)
    ->  etalis_error("a clause cannot be a variable", "remove it", Where)
    ;   \+ callable(Clause)
    ->  format(string(M), "~q is not a rule, a fact or a directive", [Clause]),
        etalis_error(M, "end each clause with a full stop", Where)
    ;   clause_head(Clause, Head), pattern_functor(Head)
    ->  etalis_error("an event pattern without a head",
                     "write an event rule: Head <- Pattern.", Where)
    ;   true
    ).

clause_head((Head :- _), Head) :- !.
clause_head(Head, Head).

%!  pattern_functor(@Term) is semidet.
%
%   Term is built by an event operator (`seq`, `and`, `or`, `cnot`,
%   `where`, `within`, `iteration`, `any`, `aggregate`, ...).

pattern_functor(Term) :-
    compound(Term),
    compound_name_arity(Term, Name, 2),
    (   temporal_operator(Name)
    ;   memberchk(Name, [or, cnot, fnot, where, within])
    ;   Name == iteration
    ;   Name == any
    ),
    !.
pattern_functor(Term) :-
    compound(Term),
    compound_name_arity(Term, aggregate, 4).

reserved_name(Term) :-
    functor(Term, Name, _),
    sub_atom(Name, 0, _, _, $).

%   pattern(+Term, +Pos, +Src, -Pattern)
%
%   Validate an event pattern and normalise it.

pattern(Term, Pos, Src, _) :-
    var(Term),
    !,
    pos_where(Pos, Src, Where),
    etalis_error("a pattern cannot be a variable",
                 "name the event, e.g. a(X) instead of X", Where).
pattern(iteration(P, N), Pos, Src, Pattern) :-
    !,
    pos_where(Pos, Src, Where),
    (   integer(N), N >= 1
    ->  true
    ;   format(string(M), "iteration needs a count of 1 or more, not ~q", [N]),
        etalis_error(M, "write e.g. iteration(reading(S, _), 3)", Where)
    ),
    pos_args(Pos, [PP|_]),
    pattern(P, PP, Src, P1),
    iterate(N, P1, Pattern).
pattern(any(N, List), Pos, Src, Pattern) :-
    !,
    pos_where(Pos, Src, Where),
    (   is_list(List), List \== []
    ->  true
    ;   etalis_error("any takes a count and a list of events",
                     "write e.g. any(2, [a(X), b(X), c(X)])", Where)
    ),
    length(List, Len),
    (   integer(N), N >= 1, N =< Len
    ->  true
    ;   format(string(M), "any needs a count from 1 to ~d, not ~q", [Len, N]),
        etalis_error(M, "write e.g. any(2, [a(X), b(X), c(X)])", Where)
    ),
    maplist(any_event(Src), List, Ps),
    combinations(N, Ps, Combinations),
    maplist(all_of, Combinations, Alternatives),
    one_of(Alternatives, Pattern).
pattern(aggregate(Fun, P, Window, Result), Pos, Src, aggregate(F, X, P1, Win, Result)) :-
    !,
    pos_where(Pos, Src, Where),
    pos_args4(Pos, [_, PP|_]),
    pattern(P, PP, Src, P1),
    aggregate_function(Fun, F, X, Where),
    aggregate_window(Window, Win, Where),
    (   var(Result)
    ->  true
    ;   etalis_error("the result of an aggregate must be a variable",
                     "write e.g. aggregate(avg(T), temp(S, T), count(5), Avg)", Where)
    ),
    (   ( var(X) ; F == count )
    ->  true
    ;   etalis_error("an aggregate is taken over a variable of its pattern",
                     "write e.g. sum(V) where V occurs in the pattern", Where)
    ).
pattern(Term, Pos, Src, Pattern) :-
    compound(Term),
    compound_name_arguments(Term, Name, [L, R]),
    pattern_operator(Name, Kind),
    !,
    pos_args(Pos, [LP, RP]),
    operator_pattern(Kind, Name, L, LP, R, RP, Pos, Src, Pattern).
pattern(Term, Pos, Src, event(Term)) :-
    pos_where(Pos, Src, Where),
    (   control_construct(Term, Name)
    ->  format(string(M), "~w is Prolog control, not an event operator", [Name]),
        etalis_error(M, "combine events with seq, and, par or or; put Prolog goals after where", Where)
    ;   callable(Term), \+ reserved_name(Term)
    ->  true
    ;   callable(Term)
    ->  etalis_error("event names starting with $ are reserved", "rename the event", Where)
    ;   format(string(M), "unknown construct ~q in a pattern", [Term]),
        etalis_error(M, "expected an event such as a(X), or a pattern built with seq, and, par, or, cnot, fnot, an Allen relation, where or within", Where)
    ).

control_construct(Term, Name) :-
    compound(Term),
    compound_name_arity(Term, Name, Arity),
    memberchk(Name/Arity, [(',')/2, (;)/2, (->)/2, (*->)/2, (\+)/1, ('|')/2]).

any_event(Src, E, P) :-
    pattern(E, none, Src, P).

%   any(N, Es): N distinct events of Es, in any order, is the `or` of
%   the `and` of each N-combination of Es.

%   combinations(+N, +Ps, -Cs): the N-element sublists of Ps, sharing
%   the variables of Ps (so no findall/3, which would copy them).

combinations(0, _, [[]]) :- !.
combinations(_, [], []) :- !.
combinations(N, [P|Ps], Cs) :-
    N1 is N - 1,
    combinations(N1, Ps, With0),
    maplist(cons(P), With0, With),
    combinations(N, Ps, Without),
    append(With, Without, Cs).

cons(H, T, [H|T]).

all_of([P], P) :- !.
all_of([P|Ps], op(and, P, Rest)) :-
    all_of(Ps, Rest).

one_of([P], P) :- !.
one_of([P|Ps], or(P, Rest)) :-
    one_of(Ps, Rest).

%   iterate(+N, +P, -Pattern): P N times in sequence.  The copies share
%   the named variables of P; the anonymous ones are fresh in each.

iterate(1, P, P) :- !.
iterate(N, P, op(seq, Rest, Copy)) :-
    N1 is N - 1,
    iterate(N1, P, Rest),
    fresh_anonymous(P, Copy).

fresh_anonymous(P, Copy) :-
    b_getval(etalis_var_names, VarNames),
    term_variables(P, Vs),
    exclude(named(VarNames), Vs, Anon),
    copy_term(Anon-P, _-Copy0),
    term_variables(Copy0, CVs),
    term_variables(P, PVs),
    pairs_keys_values(Pairs, PVs, CVs),
    maplist(rebind_named(VarNames), Pairs),
    Copy = Copy0.

named(VarNames, V) :-
    member(_ = V0, VarNames),
    V0 == V,
    !.

rebind_named(VarNames, V-C) :-
    (   named(VarNames, V)
    ->  C = V
    ;   true
    ).

aggregate_function(count, count, _, _) :- !.
aggregate_function(Fun, F, X, Where) :-
    (   compound(Fun), Fun =.. [F, X], memberchk(F, [sum, avg, min, max])
    ->  true
    ;   format(string(M), "unknown aggregate ~q", [Fun]),
        etalis_error(M, "use count, sum(X), avg(X), min(X) or max(X)", Where)
    ).

aggregate_window(count(N), count(N), _) :-
    integer(N), N >= 1, !.
aggregate_window(time(D), time(S), Where) :- !,
    duration_seconds(D, Where, S).
aggregate_window(W, _, Where) :-
    format(string(M), "~q is not an aggregate window", [W]),
    etalis_error(M, "use count(N) for the last N occurrences or time(D) for those of the last D seconds", Where).

pattern_operator(Name, temporal) :- temporal_operator(Name).
pattern_operator(or, or).
pattern_operator(cnot, cnot).
pattern_operator(fnot, fnot).
pattern_operator(where, where).
pattern_operator(within, within).

operator_pattern(temporal, Op, L, LP, R, RP, _, Src, op(Op, P, Q)) :-
    pattern(L, LP, Src, P),
    pattern(R, RP, Src, Q).
operator_pattern(or, _, L, LP, R, RP, _, Src, or(P, Q)) :-
    pattern(L, LP, Src, P),
    pattern(R, RP, Src, Q).
operator_pattern(cnot, _, L, LP, R, RP, Pos, Src, cnot(P, C)) :-
    pattern(L, LP, Src, P),
    (   P = op(seq, _, _)
    ->  true
    ;   pos_where(Pos, Src, Where),
        etalis_error("cnot negates an event between the two parts of a sequence",
                     "write (A seq B) cnot C", Where)
    ),
    pattern(R, RP, Src, C).
operator_pattern(fnot, _, L, LP, R, RP, _, Src, fnot(P, C)) :-
    pattern(L, LP, Src, P),
    pattern(R, RP, Src, C).
operator_pattern(where, _, L, LP, Goal, GP, _, Src, where(P, Goal)) :-
    pattern(L, LP, Src, P),
    pos_where(GP, Src, Where),
    (   var(Goal)
    ->  etalis_error("a where condition cannot be a variable",
                     "write a Prolog goal, e.g. where X > 10", Where)
    ;   callable(Goal)
    ->  true
    ;   format(string(M), "a where condition must be a Prolog goal, not ~q", [Goal]),
        etalis_error(M, "write a Prolog goal, e.g. where X > 10", Where)
    ).
operator_pattern(within, _, L, LP, Duration, DP, _, Src, within(P, Seconds)) :-
    pattern(L, LP, Src, P),
    pos_where(DP, Src, Where),
    duration_seconds(Duration, Where, Seconds).

%!  duration_seconds(+Duration, +Where, -Seconds) is det.
%
%   Seconds is the length of Duration: a number of seconds, or
%   milliseconds(N), seconds(N), minutes(N), hours(N) or days(N).

duration_seconds(D, Where, _) :-
    var(D),
    !,
    etalis_error("a window must be a known duration, not a variable",
                 "write e.g. within 30, within minutes(5), within hours(3)", Where).
duration_seconds(D, Where, Seconds) :-
    (   number(D)
    ->  Seconds = D
    ;   compound(D), D =.. [Unit, N], number(N), unit_seconds(Unit, S)
    ->  Seconds is N*S
    ;   format(string(M), "~q is not a duration", [D]),
        etalis_error(M, "write seconds as a number, or milliseconds(N), seconds(N), minutes(N), hours(N) or days(N)", Where)
    ),
    (   Seconds >= 0
    ->  true
    ;   etalis_error("a window cannot be negative", "use a duration of zero or more", Where)
    ).

unit_seconds(milliseconds, 0.001).
unit_seconds(seconds, 1).
unit_seconds(minutes, 60).
unit_seconds(hours, 3600).
unit_seconds(days, 86400).

%   Positions

pos_args(parentheses_term_position(_, _, Inner), Args) :-
    !,
    pos_args(Inner, Args).
pos_args(term_position(_, _, _, _, Args), Args) :- !.
pos_args(_, [none, none]).

pos_args4(Pos, Args) :-
    (   pos_args(Pos, Args0), Args0 \= [none, none]
    ->  Args = Args0
    ;   Args = [none, none, none, none]
    ).

pos_from(parentheses_term_position(From, _, _), From) :- !.
pos_from(Pos, From) :-
    compound(Pos),
    arg(1, Pos, From),
    integer(From),
    !.
pos_from(From-_, From) :- !.
pos_from(_, 0).

pos_where(Pos, Src, Where) :-
    pos_from(Pos, Offset),
    offset_where(Offset, Src, Where).

%   offset_where(+Offset, +Src, -Where): the line and column of the
%   character at Offset.  Src holds the offsets at which the lines of the
%   text start (see line_starts/2), so this takes log(lines) steps.

offset_where(Offset, src(Source, Text, Lines), pos(Source, Line, Column)) :-
    string_length(Text, Len),
    At is max(0, min(Offset, Len)),
    functor(Lines, _, N),
    line_of(Lines, At, 1, N, Line),
    arg(Line, Lines, Start),
    Column is At - Start + 1.

%   line_of(+Lines, +Offset, +Low, +High, -Line): the last line in
%   Low..High that starts at or before Offset (binary search).

line_of(Lines, Offset, Low, High, Line) :-
    (   Low >= High
    ->  Line = Low
    ;   Mid is (Low + High + 1) // 2,
        arg(Mid, Lines, Start),
        (   Start =< Offset
        ->  line_of(Lines, Offset, Mid, High, Line)
        ;   High1 is Mid - 1,
            line_of(Lines, Offset, Low, High1, Line)
        )
    ).

%   line_starts(+Text, -Lines): Lines is a term l(S1, S2, ...) whose
%   argument I is the offset at which line I of Text starts.

line_starts(Text, Lines) :-
    split_string(Text, "\n", "", Parts),
    foldl(line_start, Parts, Starts, 0, _),
    compound_name_arguments(Lines, l, Starts).

line_start(Part, Start, Start, Next) :-
    string_length(Part, Len),
    Next is Start + Len + 1.
