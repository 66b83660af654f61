:- module(etalis_input_determined,
          [ input_determined/1          % +Compiled
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).

/** <module> Whether rules give the same results on the same input

A run that checkpoints without a snapshot each time (see docs/live.md)
rebuilds the state it had by reading its input again: that gives the
same detections only if nothing but the input decides them.  The
sandbox lets a where condition read the machine's clock, draw random
numbers, keep global variables, read standard input and print;
input_determined/1 tells the rules that do none of that.  It looks at every subterm of the compiled
clauses and of the static ones, so it errs on the safe side: an event
named like such a predicate (say `print/1`) counts as one.
*/

%!  input_determined(+Compiled) is semidet.
%
%   True if the rules Compiled (compiled(Program, Clauses, Statics,
%   Settings)) call no predicate and no arithmetic function whose result
%   or effect depends on more than its arguments: the clock, random
%   numbers, global variables and counters, input other than the
%   events, output.

input_determined(compiled(Program, Clauses, Statics, _)) :-
    must_be(list, Clauses),
    must_be(list, Statics),
    \+ ( member(Term, [Program, Clauses, Statics]),
         sub_term(Sub, Term),
         callable(Sub),
         outside_input(Sub)
       ).

%   outside_input(+Term): Term calls, or names as an arithmetic
%   function, what depends on more than its arguments.

outside_input(Term) :-
    functor(Term, Name, Arity),
    (   outside(Name, Arity)
    ->  true
    ;   Name == format,
        Arity =:= 3,
        arg(1, Term, Sink),
        \+ text_sink(Sink)
    ).

text_sink(Sink) :-
    nonvar(Sink),
    Sink =.. [Kind|_],
    memberchk(Kind, [atom, string, codes, chars]).

% the clock and the process
outside(get_time, 1).
outside(thread_self, 1).
outside(date, 1).
outside(statistics, 2).
outside(statistics, 0).
outside(cputime, 0).
outside(realtime, 0).
% random numbers
outside(random, 1).
outside(random, 3).
outside(random_perm2, 4).
outside(randseq, 3).
outside(randset, 3).
outside(crypto_n_random_bytes, 2).
outside(random_float, 0).
outside(random_between, 3).
outside(random_member, 2).
outside(random_select, 3).
outside(random_subseq, 3).
outside(random_permutation, 2).
outside(random_numlist, 4).
outside(maybe, 0).
outside(maybe, 1).
outside(maybe, 2).
outside(set_random, 1).
outside(setrand, 1).
outside(getrand, 1).
outside(uuid, 1).
outside(uuid, 2).
% state outside the engine's
outside(b_setval, 2).
outside(nb_setval, 2).
outside(b_getval, 2).
outside(nb_getval, 2).
outside(nb_current, 2).
outside(flag, 3).
outside(gensym, 2).
outside(reset_gensym, 1).
outside(reset_gensym, 0).
% input other than the events
outside(read, 1).
outside(read_term, 2).
outside(get_char, 1).
outside(get_code, 1).
outside(get_byte, 1).
outside(peek_char, 1).
outside(peek_code, 1).
outside(peek_byte, 1).
outside(read_line_to_string, 2).
outside(read_line_to_codes, 2).
% output
outside(format, 1).
outside(format, 2).
outside(write, 1).
outside(write, 2).
outside(writeln, 1).
outside(writeln, 2).
outside(print, 1).
outside(print, 2).
outside(writeq, 1).
outside(writeq, 2).
outside(write_canonical, 1).
outside(write_canonical, 2).
outside(write_term, 2).
outside(write_term, 3).
outside(print_message, 2).
outside(portray_clause, 1).
outside(portray_clause, 2).
outside(listing, 0).
outside(listing, 1).
outside(nl, 0).
outside(nl, 1).
outside(tab, 1).
outside(tab, 2).
outside(put_char, 1).
outside(put_char, 2).
