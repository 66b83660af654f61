:- module(test_reader, []).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../../prolog/etalis/reader/syntax').

%   The error of reading Text: its line, column and message.

read_error(Text, Line-Column-Message) :-
    catch(( read_etl_string(Text, t, _), Message = none ),
          error(etalis_error(Message, _), pos(t, Line, Column)),
          true).

seq_chain(N, Text) :-
    numlist(1, N, Is),
    maplist([I, A]>>format(atom(A), "a~d", [I]), Is, As),
    atomic_list_concat(As, ' seq ', Body),
    format(string(Text), "h <- ~w.~n", [Body]).

pattern_size(event(_), 1) :- !.
pattern_size(op(_, L, R), N) :-
    pattern_size(L, NL),
    pattern_size(R, NR),
    N is NL + NR.

:- begin_tests(reader).

test(a_seq_chain_of_10000_operands_reads_in_linear_time, N == 10000) :-
    seq_chain(10000, Text),
    statistics(cputime, T0),
    read_etl_string(Text, t, [rule('', h, Pattern, pos(t, 1, 1), _)]),
    statistics(cputime, T1),
    assertion(T1 - T0 < 2.0),
    pattern_size(Pattern, N).

test(a_crlf_line_end_is_not_a_column, E == 2-12-"unknown construct 3 in a pattern") :-
    read_error("ok <- a seq b.\r\nh <- a seq 3.\r\n", E).

test(a_byte_order_mark_is_skipped, E == 1-15-"syntax error: operator expected") :-
    read_error("\uFEFFh <- a seq seq b.", E).

test(an_unclosed_block_comment_is_reported_where_it_opens,
     E == 3-3-"syntax error: a block comment (/*) is never closed") :-
    read_error("ok <- a seq b.\n/* done */ k <- c seq d.\n  /* open\nh <- e.\n", E).

test(an_unclosed_quote_after_quotes_that_close_is_reported_where_it_opens,
     E == 1-32-"syntax error: a quote (') is never closed") :-
    read_error("h <- a('it''s', 0'', \"\\\"\") seq 'b.", E).

test(brackets_nested_deeper_than_the_limit_are_refused,
     E == 1-1006-"brackets nested more than 1000 deep") :-
    length(Open, 2000), maplist(=(0'(), Open),
    length(Close, 2000), maplist(=(0')), Close),
    append([`h <- `, Open, `a`, Close, `.`], Codes),
    string_codes(Text, Codes),
    read_error(Text, E).

test(brackets_nested_1000_deep_read, Items = [rule('', h, event(a), _, _)]) :-
    length(Open, 1000), maplist(=(0'(), Open),
    length(Close, 1000), maplist(=(0')), Close),
    append([`h <- `, Open, `a`, Close, `.`], Codes),
    string_codes(Text, Codes),
    read_etl_string(Text, t, Items).

test(an_empty_text_has_no_items, Items == []) :-
    read_etl_string("", t, Items).

:- end_tests(reader).
