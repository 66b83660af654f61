:- module(test_errors, []).
:- use_module(library(plunit)).
:- use_module('../../prolog/etalis/errors').

:- begin_tests(errors).

%   A module that reports a mistake in a rule file needs errors.pl
%   alone: loading it loads no other module of the project.

test(stands_alone, Others == []) :-
    findall(M, ( current_module(M),
                 sub_atom(M, 0, _, _, etalis_),
                 M \== etalis_errors
               ),
            Others).

test(error_term, Caught == error(etalis_error("no head", "write Head <- Pattern."), pos('r.etl', 3, 7))) :-
    catch(etalis_error("no head", "write Head <- Pattern.", pos('r.etl', 3, 7)), Caught, true).

test(syntax_message_known, Message == "syntax error: operator priority clash") :-
    syntax_message(operator_clash, Message).

test(syntax_message_in_words, Message == "syntax error: illegal number") :-
    syntax_message(illegal_number, Message).

test(error_words, [Words, Hint] == ['type error callable',
                                    "simplify the clause; if it looks right, report this as a bug"]) :-
    error_words(error(type_error(callable, 1), _), Words, Hint).

:- end_tests(errors).
