:- module(etalis_errors,
          [ etalis_error/3,             % +Message, +Hint, +Where
            syntax_message/2,           % +What, -Message
            error_words/3               % +Error, -Words, -Hint
          ]).
:- use_module(library(apply)).

/** <module> The errors of rule files

A mistake in a rule file, whether the reader, a directive, the
compiler or the sandbox finds it, is thrown as one term:

    error(etalis_error(Message, Hint), pos(Source, Line, Column))

Message says what is wrong, Hint how to fix it, Line and Column (both
1-based) where.  etalis_error/3 makes that term, so that a module that
reports a mistake needs no other module for it; syntax_message/2 and
error_words/3 say the reader's syntax errors, and Prolog's errors met
while reading, in words.
*/

%!  error_words(+Error, -Words, -Hint) is det.
%
%   Words say what the Prolog error Error, met while reading a clause,
%   means, and Hint what to do about it.

error_words(error(domain_error(compound_non_zero_arity, _), _), "an empty argument list ()",
            "write an atom without parentheses, e.g. a instead of a()") :- !.
error_words(error(resource_error(_), _), "it is too large or nested too deeply",
            "split it into smaller rules, or nest less deeply") :- !.
error_words(error(Formal, _), Words, Hint) :-
    compound(Formal), !,
    compound_name_arguments(Formal, Name, Args),
    name_words(Name, Kind),
    include(atom, Args, Atoms),
    atomic_list_concat([Kind|Atoms], ' ', Words),
    Hint = "simplify the clause; if it looks right, report this as a bug".
error_words(_, "unexpected error", "simplify the clause; if it looks right, report this as a bug").

%!  syntax_message(+What, -Message) is det.
%
%   Message says in words what the reader's syntax_error(What) means.

syntax_message(What, Message) :-
    (   syntax_words(What, Body)
    ->  true
    ;   atom(What)
    ->  name_words(What, Body)
    ;   compound(What)
    ->  compound_name_arity(What, Name, _),
        name_words(Name, Body)
    ;   Body = "unreadable text"
    ),
    format(string(Message), "syntax error: ~w", [Body]).

name_words(Name, Words) :-
    atomic_list_concat(Parts, '_', Name),
    atomic_list_concat(Parts, ' ', Words).

syntax_words(end_of_clause, "unexpected end of clause").
syntax_words(end_of_clause_expected, "end of clause (a full stop) expected").
syntax_words(end_of_file, "unexpected end of file").
syntax_words(end_of_file_in_quoted(Quote), Words) :-
    format(string(Words), "a quote (~w) is never closed", [Quote]).
syntax_words(end_of_file_in_block_comment, "a block comment (/*) is never closed").
syntax_words(cannot_start_term, "a term cannot start here").
syntax_words(operator_balance, "unbalanced operator").
syntax_words(operator_clash, "operator priority clash").
syntax_words(quoted_punctuation, "an operand expected, found an unquoted comma or bar").
syntax_words(list_rest, "unexpected comma or bar in the rest of a list").
syntax_words(void_not_allowed, "empty argument list ()").
syntax_words(punct(Punct, End), Words) :-
    format(string(Words), "unexpected ~w before ~w", [Punct, End]).
syntax_words(undefined_char_escape(C), Words) :-
    format(string(Words), "unknown escape \\~w in quoted text", [C]).

%!  etalis_error(+Message, +Hint, +Where) is det.
%
%   Throw an error about a rule file: Message says what is wrong, Hint
%   how to fix it, Where is pos(Source, Line, Column).

etalis_error(Message, Hint, Where) :-
    throw(error(etalis_error(Message, Hint), Where)).
