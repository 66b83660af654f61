:- module(etalis_hidden_names,
          [ no_hidden_names/1,          % -Names
            hidden_count/3,             % +Names, +Kind, -Count
            hidden_names_count/4,       % +Names0, +Kind, +Count, -Names
            numbered_items/4            % +Items0, +Names0, -Items, -Names
          ]).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(library(lists)).

/** <module> The numbers of the hidden events of one compilation

Reading and compiling make hidden events: '$plusN' for a `P+` (the
reader), '$chainN' for a sequence under `strict`, `nxt` or `last`, and
'$stnN' for a run under `stn` (the compiler).  Their numbers are a value
threaded through one compilation, Names, a list of Kind-Count pairs with
Kind `etalis_kleene`, `etalis_chain` or `etalis_stn_run` and Count the
next number of that kind.  A compilation starts from none
(no_hidden_names/1) or from the Names of the rule set it extends, so the
same rules always compile to the same clauses, in one process or in
another, and an engine's snapshot holds its Names.

The reader names the hidden event of a `P+` by its position in the text
('$plus_L_C_I'); numbered_items/4 numbers them on through the rule set.
*/

kind(etalis_kleene).
kind(etalis_chain).
kind(etalis_stn_run).

%!  no_hidden_names(-Names) is det.
%
%   Names numbers every kind of hidden event from 0.

no_hidden_names(Names) :-
    findall(Kind-0, kind(Kind), Names).

%!  hidden_count(+Names, +Kind, -Count) is det.
%
%   Count is the next number of Kind in Names (0 if Names has none).

hidden_count(Names, Kind, Count) :-
    must_be(list, Names),
    (   memberchk(Kind-Count0, Names)
    ->  Count = Count0
    ;   Count = 0
    ).

%!  hidden_names_count(+Names0, +Kind, +Count, -Names) is det.
%
%   Names is Names0 with Count the next number of Kind.

hidden_names_count(Names0, Kind, Count, Names) :-
    must_be(nonneg, Count),
    findall(K-C, ( kind(K),
                   (   K == Kind
                   ->  C = Count
                   ;   hidden_count(Names0, K, C)
                   ) ),
            Names).

%!  numbered_items(+Items0, +Names0, -Items, -Names) is det.
%
%   Items is Items0 with the hidden events of the rules' `P+`, as the
%   reader names them ('$plus_L_C_I', from the `+`'s position), named
%   '$plusN', N from the `etalis_kleene` count of Names0 on, in the order
%   in which the rules mention them; Names counts them too.  Items
%   numbered already stay as they are.

numbered_items(Items0, Names0, Items, Names) :-
    hidden_count(Names0, etalis_kleene, K0),
    foldl(numbered_item, Items0, Items, K0-[], K-_),
    hidden_names_count(Names0, etalis_kleene, K, Names).

%   numbered_item(+Item0, -Item, +K0-Map0, -K-Map): Map, read name-N for
%   each name of the reader numbered so far, and K the next N.

numbered_item(Item0, Item, K0-Map0, K-Map) :-
    (   Item0 = rule(_, _, _, _, _),
        findall(Name, ( sub_term(T, Item0), read_name(T, Name) ), Names),
        Names \== []
    ->  foldl(numbered_name, Names, K0-Map0, K-Map),
        renamed(Item0, Map, Item)
    ;   Item = Item0,
        K = K0,
        Map = Map0
    ).

numbered_name(Name, K0-Map0, K-Map) :-
    (   memberchk(Name-_, Map0)
    ->  K = K0,
        Map = Map0
    ;   K is K0 + 1,
        Map = [Name-K0|Map0]
    ).

%   read_name(+Term, -Name): Term is, or is named, Name, a hidden event
%   of a `P+` as the reader names it.

read_name(T, Name) :-
    (   atom(T)
    ->  Name = T
    ;   compound(T),
        compound_name_arity(T, Name, _)
    ),
    sub_atom(Name, 0, _, _, '$plus_').

%   renamed(+Term0, +Map, -Term): Term0 with each name of the reader
%   numbered as Map says; its variables are Term0's.

renamed(T0, _, T) :-
    var(T0),
    !,
    T = T0.
renamed(T0, Map, T) :-
    compound(T0),
    !,
    compound_name_arguments(T0, Name0, Args0),
    renamed_name(Name0, Map, Name),
    maplist(renamed_arg(Map), Args0, Args),
    compound_name_arguments(T, Name, Args).
renamed(T0, Map, T) :-
    atom(T0),
    !,
    renamed_name(T0, Map, T).
renamed(T, _, T).

renamed_arg(Map, A0, A) :-
    renamed(A0, Map, A).

renamed_name(Name0, Map, Name) :-
    (   memberchk(Name0-N, Map)
    ->  format(atom(Name), '$plus~d', [N])
    ;   Name = Name0
    ).
