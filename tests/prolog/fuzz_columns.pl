/*  Differential fuzz of the foreign library's text paths against Prolog's.

    swipl tests/prolog/fuzz_columns.pl LIBRARY SEED CASES

    LIBRARY is a build of etalis_columns.c (etalis_columns.so; a build
    with -fsanitize=address,undefined finds its reads past a buffer).
    CASES random and adversarial batch lists go through
    etalis_list_terms/4 and term_string/2: the library must give the
    terms term_string/2 gives (compared with ==, so -0.0 is not 0.0) and
    the Names that the batch's intervals and heads call for, or leave the
    text, and it must read every batch made in its shape.  CASES random
    detections go through etalis_write_detection/4 and
    write_json_detection/4: the library must write the same bytes or
    leave the detection.  Each disagreement is printed with its input;
    the last line counts the cases, and the exit status is 1 if any
    disagreed.
*/

:- use_module(library(random)).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module('../../prolog/etalis/runtime/columns').
:- use_module('../../prolog/etalis/runtime/protocol').

:- initialization(main, main).

main :-
    current_prolog_flag(argv, [Library, SeedText, CasesText]),
    atom_number(SeedText, Seed),
    atom_number(CasesText, Cases),
    columns_library(Library),
    set_random(seed(Seed)),
    nb_setval(faults, 0),
    aggregate_all(count, (between(1, Cases, _), reader_case(true)), ReadByLibrary),
    aggregate_all(count, (between(1, Cases, _), writer_case(true)), WrittenByLibrary),
    nb_getval(faults, Faults),
    format("reader ~d cases (~d read by the library), writer ~d cases (~d written by it), ~d faults~n",
           [Cases, ReadByLibrary, Cases, WrittenByLibrary, Faults]),
    (   Faults =:= 0 -> halt(0) ; halt(1) ).

fault(Kind, Culprit) :-
    nb_getval(faults, F0),
    F is F0 + 1,
    nb_setval(faults, F),
    format("FAULT ~w: ~q~n", [Kind, Culprit]).

% -- batch lists ------------------------------------------------------------

%   reader_case(-ByLibrary): one batch through both readers; ByLibrary
%   true if the library read it.

reader_case(ByLibrary) :-
    batch(Events, InShape),
    length(Events, Count0),
    (   maybe(0.05) -> random_between(0, 3, D), Count is max(0, Count0 + D - 1) ; Count = Count0 ),
    atomic_list_concat(Events, ',\n', Body),
    format(string(Text0), "[~w]", [Body]),
    (   InShape == true, ( nb_getval(clean, true) ; maybe(0.5) )
    ->  Text = Text0, Shaped = InShape
    ;   mutated(Text0, Text), Shaped = false
    ),
    (   catch(etalis_columns:etalis_list_terms(Text, Count, Terms, Names), E, true)
    ->  (   nonvar(E)
        ->  fault(reader_exception(E), Text), ByLibrary = false
        ;   ByLibrary = true,
            compare_read(Text, Count, Terms, Names)
        )
    ;   ByLibrary = false,
        (   Shaped == true, Count == Count0
        ->  fault(reader_left_its_shape, Text)
        ;   true
        )
    ).

compare_read(Text, Count, Terms, Names) :-
    (   catch(term_string(Batch, Text), _, fail),
        is_list(Batch),
        length(Batch, Count)
    ->  (   Batch == Terms
        ->  expected_names(Terms, Expected),
            (   Names == Expected -> true ; fault(reader_names(Names, Expected), Text) )
        ;   fault(reader_terms(Terms, Batch), Text)
        )
    ;   fault(reader_read_what_prolog_does_not, Text)
    ).

%   expected_names(+Terms, -Names): the distinct names of Terms in the
%   order of their first head (a name per name and arity), or
%   `unchecked` if there are more than 64 heads or an interval is not
%   known to start no later than it ends (an integer beyond 2^53 against
%   a float is not compared).

expected_names(Terms, Names) :-
    foldl(head_of, Terms, [], RevHeads),
    reverse(RevHeads, Heads),
    length(Heads, NHeads),
    (   NHeads =< 64,
        forall(member(event(_, T), Terms), known_time(T))
    ->  maplist([N/_, N]>>true, Heads, Names)
    ;   Names = unchecked
    ).

head_of(event(H, _), Hs0, Hs) :-
    (   atom(H) -> N = H, A = 0 ; compound_name_arity(H, N, A) ),
    (   memberchk(N/A, Hs0) -> Hs = Hs0 ; Hs = [N/A|Hs0] ).

known_time([T1, T2]) :- !,
    \+ beyond_2_53(T1, T2),
    T1 =< T2.
known_time(_).

beyond_2_53(A, B) :-
    (   float(A), integer(B) -> abs(B) > 2^53
    ;   integer(A), float(B) -> abs(A) > 2^53
    ).

%   batch(-Events, -InShape): the texts of a few events; InShape is true
%   if each is in the shape the library reads.

batch(Events, InShape) :-
    (   maybe(0.5) -> nb_setval(clean, true) ; nb_setval(clean, false) ),
    random_member(Size, [0, 1, 1, 2, 3, 5, 8, 20, 70]),
    length(Events, Size),
    maplist(event_text, Events, Shapes),
    (   memberchk(false, Shapes) -> InShape = false ; InShape = true ).

event_text(Text, InShape) :-
    name_text(Name, NameShape),
    (   nb_getval(clean, true)
    ->  random_member(Arity, [0, 0, 1, 1, 2, 3, 5, 32])
    ;   random_member(Arity, [0, 1, 2, 3, 31, 32, 33, 100])
    ),
    length(Args, Arity),
    maplist(arg_text, Args, ArgShapes),
    (   Arity =:= 0 -> Head = Name
    ;   atomic_list_concat(Args, ', ', ArgsText),
        format(atom(Head), "~w(~w)", [Name, ArgsText])
    ),
    time_text(Time, TimeShape),
    format(atom(Text0), "~wevent(~w~w~w,~w~w~w)", [layout, layout, Head, layout, layout, Time, layout]),
    layout_filled(Text0, Text),
    (   ( NameShape == false ; TimeShape == false ; memberchk(false, ArgShapes) ; Arity > 32 )
    ->  InShape = false
    ;   InShape = true
    ).

%   layout_filled(+Text0, -Text): each `layout` of Text0 as nothing
%   (mostly) or as some spaces, tabs and line ends.

layout_filled(Text0, Text) :-
    atomic_list_concat(Parts, layout, Text0),
    layouts(Parts, Filled),
    atomic_list_concat(Filled, Text).

layouts([P], [P]) :- !.
layouts([P|Ps], [P, L|Fs]) :-
    (   maybe(0.8) -> L = ''
    ;   random_member(L, [' ', '  ', '\t', '\n', '\r\n', ' \n '])
    ),
    layouts(Ps, Fs).

name_text(Name, InShape) :-
    random_between(1, 12, K0),
    clean_choice(K0, 9, K),
    (   K =< 3 -> random_member(Name, [a, b, c, e1, aB_9, event, is, mod, rem, xor, dynamic, table, discontiguous,
                                       seq, and, or, par, where, equals, meets, during, not, cnot, end_of_file]),
                  InShape = true
    ;   K =< 8 -> random_between(0, 70, I), format(atom(Name), "e~d", [I]), InShape = true
    ;   K =< 9 -> random_between(1, 3000, Len), length(Cs, Len), maplist(=(0'n), Cs), atom_codes(Name, Cs),
                  InShape = true
    ;   random_member(Name, ['A', '_a', 'é', 'ab\x100\', '\'a\'', '[]', '{}', '-', '+', 'a.b', '0a', '"a"', '', 'a\0\']),
        InShape = false
    ).

arg_text(Text, InShape) :-
    random_between(1, 20, K0),
    clean_choice(K0, 15, K),
    (   K =< 8 -> number_text(Text, InShape)
    ;   K =< 15 -> name_text(Text, InShape)
    ;   random_member(Text, ['X', '_', '"s"', '[]', '[1]', 'f(1)', '- 1', '+1', '-a', '0\'a', '0x1F', '0b101', '0o7',
                             '1_000', '1 000', '1.0Inf', '-1.0Inf', '1.5NaN', 'inf', 'nan', '1e10', '1.e5', '.5', '1.',
                             '1.0e', '1.0e+', '1.0ee1', '- 1.0', '"', '\'', '\\', '%', 'a/*c*/']),
        InShape = false
    ).

time_text(Text, InShape) :-
    (   maybe(0.6)
    ->  number_text(Text, InShape)
    ;   number_text(T1, S1), number_text(T2, S2),
        format(atom(Text), "[~w,~w~w]", [T1, layout, T2]),
        (   S1 == true, S2 == true -> InShape = true ; InShape = false )
    ).

%   number_text(-Text, -InShape): an integer or a float, as the library
%   reads it (InShape true) or past what it reads (19 digits and more,
%   exponents past a float's range, texts of 64 characters and more).

number_text(Text, InShape) :-
    number_text0(Text0, InShape0),
    (   InShape0 == false, nb_getval(clean, true)
    ->  number_text(Text, InShape)           % a clean batch draws again
    ;   Text = Text0, InShape = InShape0
    ).

number_text0(Text, InShape) :-
    random_between(1, 14, K0),
    (   K0 == 6 -> clean_choice(K0, 5, K) ; K = K0 ),
    (   K =< 4
    ->  random_between(1, 18, Digits), digits(Digits, Ds),
        sign(S), format(atom(Text), "~w~w", [S, Ds]), InShape = true
    ;   K =< 5
    ->  random_member(Text-InShape, ['9223372036854775807'-false, '-9223372036854775808'-false,
                                     '9223372036854775808'-false, '999999999999999999'-true,
                                     '-999999999999999999'-true, '000000000000000001'-true,
                                     '0000000000000000001'-false, '1152921504606846976'-false,
                                     '-0'-true, '0'-true, '4611686018427387904'-false,
                                     '2305843009213693952'-false, '9007199254740993'-true,
                                     '-9007199254740993'-true])
    ;   K =< 6
    ->  random_between(19, 40, Digits), digits(Digits, Ds), sign(S), format(atom(Text), "~w~w", [S, Ds]),
        InShape = false
    ;   K =< 11
    ->  random_between(1, 25, I), digits(I, Is), random_between(1, 25, F), digits(F, Fs), sign(S),
        exponent(E, EShape),
        format(atom(Text), "~w~w.~w~w", [S, Is, Fs, E]),
        atom_length(Text, L),
        atom_concat(Is, Fs, Mantissa),
        float_in_range(Text, Mantissa, RShape),
        (   EShape == true, RShape == true, L < 64 -> InShape = true ; InShape = false )
    ;   random_member(Text-InShape, ['-0.0'-true, '0.0'-true, '1.0e400'-false, '1.0e-400'-false, '2.5e-320'-false,
                                     '4.9e-324'-false, '2.2250738585072014e-308'-true, '1.7976931348623157e308'-true,
                                     '1.7976931348623159e308'-false, '9007199254740993.0'-true, '1.0E+10'-true,
                                     '1.0e-0'-true, '0.1e0010'-true, '123456789012345678.5'-true])
    ).

%   float_in_range(+Text, +Mantissa, -InShape): Text reads as a finite
%   float that is zero (its Mantissa all zeros) or not below the normal
%   range (strtod's ERANGE).

float_in_range(Text, Mantissa, InShape) :-
    (   catch(term_to_atom(F, Text), _, fail),
        float(F),
        (   abs(F) >= 2.2250738585072014e-308
        ->  true
        ;   atom_codes(Mantissa, Cs), forall(member(C, Cs), C == 0'0)
        )
    ->  InShape = true
    ;   InShape = false
    ).

%   clean_choice(+K0, +Max, -K): K0, or at most Max in a batch made
%   clean (in the library's shape but for its numbers' ranges).

clean_choice(K0, Max, K) :-
    (   nb_getval(clean, true) -> K is min(K0, Max) ; K = K0 ).

digits(N, Text) :-
    length(Cs, N),
    maplist([C]>>(random_between(0'0, 0'9, C)), Cs),
    atom_codes(Text, Cs).

sign(S) :- ( maybe(0.3) -> S = '-' ; S = '' ).

exponent(E, InShape) :-
    random_between(1, 6, K),
    (   K =< 3 -> E = '', InShape = true
    ;   random_member(L, [e, 'E']), random_member(Sg, ['', '+', '-']),
        (   nb_getval(clean, true) -> random_between(0, 250, X) ; random_between(0, 400, X) ),
        format(atom(E), "~w~w~d", [L, Sg, X]), InShape = true
    ).

%   mutated(+Text0, -Text): Text0 with a few bytes put in, taken out or
%   swapped, or cut short.

mutated(Text0, Text) :-
    string_codes(Text0, Cs0),
    random_between(1, 3, N),
    mutations(N, Cs0, Cs),
    string_codes(Text, Cs).

mutations(0, Cs, Cs) :- !.
mutations(N, Cs0, Cs) :-
    length(Cs0, Len),
    random_between(0, Len, At),
    length(Before, At),
    append(Before, After, Cs0),
    random_between(1, 5, K),
    (   K =< 2
    ->  random_member(Ins, [0'(, 0'), 0'[, 0'], 0',, 0'., 0'e, 0'E, 0'-, 0'+, 0'_, 0'0, 0'9, 0'a, 0'Z, 0' , 0'\n,
                            0'\t, 0'\f, 0'\v, 0'", 0'\', 0'%, 0'/, 0'*, 0'|, 0'{, 0'}, 0, 0xE9, 0xA0, 0x100, 0x2028,
                            0x1F600, 0x3000]),
        append(Before, [Ins|After], Cs1)
    ;   K =< 3, After = [_|Rest]
    ->  append(Before, Rest, Cs1)
    ;   K =< 4
    ->  Cs1 = Before
    ;   After = [X, Y|Rest]
    ->  append(Before, [Y, X|Rest], Cs1)
    ;   Cs1 = Cs0
    ),
    N1 is N - 1,
    mutations(N1, Cs1, Cs).

% -- detections ---------------------------------------------------------------

%   writer_case(-ByLibrary): one detection through both writers;
%   ByLibrary true if the library wrote it.

writer_case(ByLibrary) :-
    (   maybe(0.5) -> nb_setval(clean, true) ; nb_setval(clean, false) ),
    random_member(Format, [object, row]),
    detection_event(E),
    random_time(T1),
    random_time(T2),
    (   catch(with_output_to(string(P), etalis_protocol:write_json_detection(Format, E, T1, T2)), PE, true)
    ->  true
    ;   PE = failed
    ),
    (   catch(with_output_to(string(C), etalis_columns:etalis_write_detection(Format, E, T1, T2)), CE, true)
    ->  (   nonvar(CE)
        ->  fault(writer_exception(CE), det(Format, E, T1, T2)), ByLibrary = false
        ;   ByLibrary = true,
            (   var(PE), P == C -> true
            ;   fault(writer_bytes(C, PE, P), det(Format, E, T1, T2))
            )
        )
    ;   ByLibrary = false
    ).

detection_event(E) :-
    random_between(1, 10, K0),
    clean_choice(K0, 7, K),
    (   K =< 7
    ->  random_text(Name),
        random_member(Arity, [0, 0, 1, 2, 3, 5, 40]),
        length(Args, Arity),
        maplist(random_arg, Args),
        (   Arity =:= 0, maybe(0.8), atom(Name) -> E = Name ; atom(Name) -> compound_name_arguments(E, Name, Args)
        ;   E = Name
        )
    ;   random_member(E, [[], '[]', "s", 1, 1.5, [a], f(g(1)), '{}'(x), -(1), _])
    ).

random_arg(A) :-
    random_between(1, 12, K0),
    clean_choice(K0, 8, K),
    (   K =< 4 -> random_number(A)
    ;   K =< 8 -> random_text(A)
    ;   random_member(A, [_, [], [1, b], f(x), 'X'(_), 1r3, -(-(1)), "", '', "a\"b", '\\'])
    ).

random_time(T) :-
    (   nb_getval(clean, true) -> random_number(T), ( float(T) -> finite_number(T) ; true )
    ;   maybe(0.9) -> random_number(T)
    ;   random_member(T, [a, "1", [], 1r3, _, f(1)])
    ).

finite_number(X) :- X =:= X, abs(X) =< 1.7976931348623157e308.

random_number(N) :-
    random_between(1, 12, K),
    (   K =< 3 -> random_between(-1000, 1000, N)
    ;   K =< 4 -> random_member(N, [9223372036854775807, -9223372036854775808, 9223372036854775808,
                                    -9223372036854775809, 1180591620717411303424, 4611686018427387904,
                                    -4611686018427387905, 0])
    ;   K =< 5 -> random_member(X, [inf, -inf, nan, -0.0, 0.0, epsilon, 5.0e-324,
                                    2.2250738585072014e-308, 1.7976931348623157e308, 1.0e15, 1.0e16, 0.1,
                                    123456789.0, 1.0e-7, 1.0e-4, 9.999999999999999e-5, 999999999999999.0,
                                    999999999999999.9, 0.30000000000000004]),
                  N is X
    ;   K =< 7 -> random_between(-999999999999999, 999999999999999, M),     % a decimal of at most 15 digits
                  random_between(0, 19, P),
                  N is M / 10.0 ** P
    ;   F is random_float, random_between(-330, 310, Ex), sign(S),
        catch(N0 is F * 10.0 ** Ex, _, N0 = 0.0),
        (   S == '-' -> N is -N0 ; N = N0 )
    ).

random_text(T) :-
    random_between(1, 10, K0),
    clean_choice(K0, 5, K),
    (   K =< 5 -> random_between(0, 12, L), random_codes(L, 0'a, 0'z, Cs)
    ;   K =< 6 -> random_member(L, [255, 256, 257, 1000]), random_codes(L, 0' , 0'~, Cs)
    ;   random_between(0, 8, L), random_member(Hi, [0'~, 127, 255, 0x3000, 0x1F600]),
        random_codes(L, 0, Hi, Cs)
    ),
    (   maybe(0.7) -> atom_codes(T, Cs) ; string_codes(T, Cs) ).

random_codes(L, Lo, Hi, Cs) :-
    length(Cs, L),
    maplist([C]>>(random_between(Lo, Hi, C)), Cs).
