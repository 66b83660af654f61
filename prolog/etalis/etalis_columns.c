/*  etalis_columns: batches of events handed over as packed columns.

    Python (numpy/pyarrow) packs a batch of N events as columns and passes
    their addresses in the request; pyswip runs SWI-Prolog inside the
    Python process, so the addresses are valid here.  This library builds
    the batch list of event terms from them, the list that reading the
    batch's text would give (see prolog/etalis/columns.pl for the layout).
*/

#include <SWI-Prolog.h>
#include <stdint.h>
#include <string.h>

enum { TAG_INT = 0, TAG_FLOAT = 1, TAG_TABLE = 2 };

typedef struct
{ const uint8_t *tags;          /* a tag a row, or NULL: every row is tag */
  int tag;
  const int64_t *vals;          /* 8 bytes a row: int64, float64 or a table index */
  term_t table;                 /* first of table_size consecutive term refs */
  size_t table_size;
} column;

static functor_t FUNCTOR_event2;
static functor_t FUNCTOR_columns4;
static functor_t FUNCTOR_col3;
static functor_t FUNCTOR_all1;
static functor_t FUNCTOR_heads2;
static functor_t FUNCTOR_slash2;
static atom_t ATOM_interval;
static atom_t ATOM_point;

static int
type_error(const char *expected, term_t culprit)
{ return PL_type_error(expected, culprit);
}

static int
get_address(term_t t, const void **p)
{ int64_t a;

  if ( !PL_get_int64_ex(t, &a) )
    return FALSE;
  if ( a == 0 )
    return PL_domain_error("address", t);
  *p = (const void *)(intptr_t)a;
  return TRUE;
}

/* The elements of the proper list List into Size fresh consecutive term refs. */
static int
get_table(term_t list, term_t *refs, size_t *size)
{ size_t n = 0;
  term_t head = PL_new_term_ref(), tail = PL_copy_term_ref(list);

  if ( PL_skip_list(list, 0, &n) != PL_LIST )
    return type_error("list", list);
  *refs = n ? PL_new_term_refs((int)n) : 0;
  *size = n;
  for ( size_t i = 0; PL_get_list(tail, head, tail); i++ )
  { if ( !PL_put_term(*refs + i, head) )
      return FALSE;
  }
  return TRUE;
}

static int
get_column(term_t spec, column *c)
{ term_t a = PL_new_term_ref();

  if ( !PL_is_functor(spec, FUNCTOR_col3) )
    return type_error("col(Tags, Values, Table)", spec);
  _PL_get_arg(1, spec, a);
  if ( PL_is_functor(a, FUNCTOR_all1) )
  { term_t k = PL_new_term_ref();
    _PL_get_arg(1, a, k);
    c->tags = NULL;
    if ( !PL_get_integer_ex(k, &c->tag) )
      return FALSE;
  } else if ( !get_address(a, (const void **)&c->tags) )
    return FALSE;
  _PL_get_arg(2, spec, a);
  if ( !get_address(a, (const void **)&c->vals) )
    return FALSE;
  _PL_get_arg(3, spec, a);
  return get_table(a, &c->table, &c->table_size);
}

static int
put_cell(term_t t, const column *c, size_t row)
{ int tag = c->tags ? c->tags[row] : c->tag;
  int64_t v = c->vals[row];

  switch ( tag )
  { case TAG_INT:
      return PL_put_int64(t, v);
    case TAG_FLOAT:
    { double d;
      memcpy(&d, &v, sizeof d);
      return PL_put_float(t, d);
    }
    case TAG_TABLE:
      if ( v < 0 || (size_t)v >= c->table_size )
        return PL_representation_error("column_table_index");
      return PL_put_term(t, c->table + v);
    default:
      return PL_representation_error("column_tag");
  }
}

/* etalis_column_terms(+Spec, -Terms)

   Spec is columns(N, heads(CodesAddress, Heads), Columns, When): row I's
   event is Name(A1, ..., Ak) for the element Name/k of Heads that its
   int32 code names (a code of -1: the row is [], nothing to process),
   Ai the cell of row I of the I-th element of Columns, and its time the
   cell of the column after the arguments (When = point) or the list of
   the cells of the last two columns (When = interval); When may also be
   the address of N uint8 flags, 1 for a row of the last two columns'
   interval, 0 for a row at the point of the second last.  A column is
   col(Tags, Values, Table): Values the address of N 8-byte cells, Tags
   the address of N uint8 tags or all(Tag); tag 0 an int64, 1 a float64,
   2 the Table element of that index.
*/
static foreign_t
column_terms(term_t spec, term_t terms)
{ term_t a = PL_new_term_ref();
  int64_t n64;
  const int32_t *codes = NULL;
  term_t heads;
  size_t nheads, ncols;
  int interval;
  const uint8_t *points = NULL;        /* per row: 1 an interval, 0 a point */
  atom_t when;

  if ( !PL_is_functor(spec, FUNCTOR_columns4) )
    return type_error("columns(N, Heads, Columns, When)", spec);
  _PL_get_arg(1, spec, a);
  if ( !PL_get_int64_ex(a, &n64) )
    return FALSE;
  if ( n64 < 0 )
    return PL_domain_error("not_less_than_zero", a);
  size_t n = (size_t)n64;

  _PL_get_arg(2, spec, a);
  if ( !PL_is_functor(a, FUNCTOR_heads2) )
    return type_error("heads(Codes, Table)", a);
  { term_t h = PL_new_term_ref();
    _PL_get_arg(1, a, h);
    if ( n && !get_address(h, (const void **)&codes) )
      return FALSE;
    _PL_get_arg(2, a, h);
    if ( !get_table(h, &heads, &nheads) )
      return FALSE;
  }
  functor_t *functors = nheads ? PL_malloc(nheads * sizeof(functor_t)) : NULL;
  int *arities = nheads ? PL_malloc(nheads * sizeof(int)) : NULL;
  column *cols = NULL;
  int rc = FALSE;

  for ( size_t i = 0; i < nheads; i++ )
  { term_t name = PL_new_term_ref(), arity = PL_new_term_ref();
    atom_t na;
    if ( !PL_is_functor(heads + i, FUNCTOR_slash2) )
    { type_error("Name/Arity", heads + i);
      goto out;
    }
    _PL_get_arg(1, heads + i, name);
    _PL_get_arg(2, heads + i, arity);
    if ( !PL_get_atom_ex(name, &na) || !PL_get_integer_ex(arity, &arities[i]) )
      goto out;
    if ( arities[i] < 0 )
    { PL_domain_error("not_less_than_zero", arity);
      goto out;
    }
    functors[i] = arities[i] ? PL_new_functor(na, arities[i]) : (functor_t)na;
  }

  _PL_get_arg(3, spec, a);
  if ( PL_skip_list(a, 0, &ncols) != PL_LIST )
  { type_error("list", a);
    goto out;
  }
  cols = ncols ? PL_malloc(ncols * sizeof(column)) : NULL;
  { term_t tail = PL_copy_term_ref(a), head = PL_new_term_ref();
    for ( size_t j = 0; PL_get_list(tail, head, tail); j++ )
    { if ( !get_column(head, &cols[j]) )
        goto out;
    }
  }

  _PL_get_arg(4, spec, a);
  if ( PL_is_integer(a) )
  { if ( !get_address(a, (const void **)&points) )
      goto out;
    interval = 1;
  } else if ( !PL_get_atom_ex(a, &when) )
  { goto out;
  } else if ( when == ATOM_point )
  { interval = 0;
  } else if ( when == ATOM_interval )
  { interval = 1;
  } else
  { PL_domain_error("point_or_interval", a);
    goto out;
  }
  size_t nargs = ncols - (interval ? 2 : 1);
  if ( ncols < (size_t)(interval ? 2 : 1) )
  { PL_domain_error("time_columns", a);
    goto out;
  }
  for ( size_t i = 0; i < nheads; i++ )
  { if ( (size_t)arities[i] > nargs )
    { PL_domain_error("arity_within_columns", heads + i);
      goto out;
    }
  }

  { term_t list = PL_new_term_ref();
    term_t elem = PL_new_term_ref();
    term_t ev = PL_new_term_ref();
    term_t t = PL_new_term_ref();
    term_t t2 = PL_new_term_ref();
    term_t args = nargs ? PL_new_term_refs((int)nargs) : 0;
    const column *tc = &cols[nargs];

    PL_put_nil(list);
    for ( size_t r = n; r-- > 0; )
    { int32_t code = codes[r];
      if ( code < 0 )
      { PL_put_nil(elem);
      } else
      { if ( (size_t)code >= nheads )
        { PL_representation_error("column_head_code");
          goto out;
        }
        int k = arities[code];
        if ( k == 0 )
        { if ( !PL_put_atom(ev, (atom_t)functors[code]) )
            goto out;
        } else
        { for ( int j = 0; j < k; j++ )
            if ( !put_cell(args + j, &cols[j], r) )
              goto out;
          if ( !PL_cons_functor_v(ev, functors[code], args) )
            goto out;
        }
        if ( interval && (!points || points[r]) )
        { if ( !put_cell(t2, tc + 1, r) || !put_cell(t, tc, r) )
            goto out;
          term_t nil = elem;            /* elem is free until the end */
          if ( !PL_put_nil(nil) || !PL_cons_list(t2, t2, nil) || !PL_cons_list(t, t, t2) )
            goto out;
        } else if ( !put_cell(t, tc, r) )
          goto out;
        if ( !PL_cons_functor(elem, FUNCTOR_event2, ev, t) )
          goto out;
      }
      if ( !PL_cons_list(list, elem, list) )
        goto out;
    }
    rc = PL_unify(terms, list);
  }

out:
  if ( functors ) PL_free(functors);
  if ( arities ) PL_free(arities);
  if ( cols ) PL_free(cols);
  return rc;
}

install_t
install_etalis_columns(void)
{ FUNCTOR_event2 = PL_new_functor(PL_new_atom("event"), 2);
  FUNCTOR_columns4 = PL_new_functor(PL_new_atom("columns"), 4);
  FUNCTOR_col3 = PL_new_functor(PL_new_atom("col"), 3);
  FUNCTOR_all1 = PL_new_functor(PL_new_atom("all"), 1);
  FUNCTOR_heads2 = PL_new_functor(PL_new_atom("heads"), 2);
  FUNCTOR_slash2 = PL_new_functor(PL_new_atom("/"), 2);
  ATOM_interval = PL_new_atom("interval");
  ATOM_point = PL_new_atom("point");
  PL_register_foreign_in_module("etalis_columns", "etalis_column_terms", 2, column_terms, 0);
}
