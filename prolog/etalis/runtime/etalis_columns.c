/*  etalis_columns: batches of events handed over as packed columns.

    Python (numpy/pyarrow) packs a batch of N events as columns and passes
    their addresses in the request; pyswip runs SWI-Prolog inside the
    Python process, so the addresses are valid here.  This library builds
    the batch list of event terms from them, the list that reading the
    batch's text would give (see prolog/etalis/runtime/columns.pl for the layout).
*/

#include <SWI-Stream.h>
#include <SWI-Prolog.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_INT = 0, TAG_FLOAT = 1, TAG_TABLE = 2 };

typedef struct
{ const uint8_t *tags;          /* a tag a row, or NULL: every row is tag */
  int tag;
  const int64_t *vals;          /* 8 bytes a row: int64, float64 or a table index */
  term_t table;                 /* first of table_size consecutive term refs */
  size_t table_size;
  int table_ground;             /* every element of the table is ground */
} column;

static functor_t FUNCTOR_event2;
static functor_t FUNCTOR_columns4;
static functor_t FUNCTOR_col3;
static functor_t FUNCTOR_all1;
static functor_t FUNCTOR_heads2;
static functor_t FUNCTOR_slash2;
static atom_t ATOM_interval;
static atom_t ATOM_point;
static atom_t ATOM_object;
static atom_t ATOM_row;

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
  if ( !get_table(a, &c->table, &c->table_size) )
    return FALSE;
  c->table_ground = TRUE;
  for ( size_t i = 0; i < c->table_size && c->table_ground; i++ )
    c->table_ground = PL_is_ground(c->table + i);
  return TRUE;
}

/* The tag of row's cell in column c. */
static int
cell_tag(const column *c, size_t row)
{ return c->tags ? c->tags[row] : c->tag;
}

/* The cell of row in column c is a ground argument: a number, or a
   ground element of the table. */
static int
ground_cell(const column *c, size_t row)
{ int tag = cell_tag(c, row);
  return tag == TAG_INT || tag == TAG_FLOAT || (tag == TAG_TABLE && c->table_ground);
}

/* The cell of row in column c is a finite number: an int64 (*is_int) or
   a finite float64 (*d). */
static int
finite_cell(const column *c, size_t row, int *is_int, int64_t *i, double *d)
{ int tag = cell_tag(c, row);
  *i = c->vals[row];
  if ( tag == TAG_INT )
  { *is_int = TRUE;
    return TRUE;
  }
  if ( tag == TAG_FLOAT )
  { memcpy(d, i, sizeof *d);
    *is_int = FALSE;
    return isfinite(*d);
  }
  return FALSE;
}

/* The time of row (the cell of column tc, or with an interval the cells
   of tc and tc+1) is a valid time: finite numbers, the start not after
   the end.  An interval of an int64 and a float64 is left to Prolog. */
static int
valid_time(const column *tc, int interval, size_t row)
{ int int1, int2;
  int64_t i1, i2;
  double d1, d2;

  if ( !finite_cell(tc, row, &int1, &i1, &d1) )
    return FALSE;
  if ( !interval )
    return TRUE;
  if ( !finite_cell(tc + 1, row, &int2, &i2, &d2) || int1 != int2 )
    return FALSE;
  return int1 ? i1 <= i2 : d1 <= d2;
}

static int
put_cell(term_t t, const column *c, size_t row)
{ int tag = cell_tag(c, row);
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

/* etalis_column_terms(+Spec, -Terms, -Checked)

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

   Checked is `true` if every row's event has ground arguments (numbers,
   or ground elements of their tables) and a valid time (finite numbers,
   a start not after its end), else `false`.
*/
static foreign_t
column_terms(term_t spec, term_t terms, term_t checked)
{ term_t a = PL_new_term_ref();
  int valid = TRUE;
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
        if ( valid )
        { valid = valid_time(tc, interval && (!points || points[r]), r);
          for ( int j = 0; j < k && valid; j++ )
            valid = ground_cell(&cols[j], r);
        }
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
    rc = PL_unify(terms, list) && PL_unify_bool(checked, valid);
  }

out:
  if ( functors ) PL_free(functors);
  if ( arities ) PL_free(arities);
  if ( cols ) PL_free(cols);
  return rc;
}

/*  Detections packed for Python, the other way: etalis_pack_detection/3
    appends det(E, T1, T2) to buffers that etalis_packed_detections/2
    describes after the feed.  Each detection is its name (an index into
    the table of atoms) and arity, then a cell a argument and one for each
    time: tag 0 an int64, 1 a float64, 2 an atom (an index into the table
    of atoms), 3 a JSON text (an index into the texts) for any other value,
    as the JSON writer writes it.  Process-wide, for the feed that Python
    is running (one at a time, under the bridge's lock).
*/

typedef struct
{ void *data;
  size_t size;                  /* elements used */
  size_t cap;                   /* elements allocated */
} growing;

static growing d_heads, d_arities, d_tags, d_vals, d_atoms, d_texts;
static atom_t *atom_keys;       /* open addressing: atom -> index + 1 */
static int32_t *atom_slots;
static size_t atom_cap;
static predicate_t json_text_pred;

static int
grow(growing *g, size_t esize, size_t more)
{ if ( g->size + more > g->cap )
  { size_t cap = g->cap ? g->cap * 2 : 1024;
    while ( cap < g->size + more )
      cap *= 2;
    void *data = realloc(g->data, cap * esize);
    if ( !data )
      return PL_resource_error("memory");
    g->data = data;
    g->cap = cap;
  }
  return TRUE;
}

static int
atom_index(atom_t a, int32_t *index)
{ if ( d_atoms.size * 2 >= atom_cap )
  { size_t cap = atom_cap ? atom_cap * 2 : 256;
    atom_t *keys = calloc(cap, sizeof(atom_t));
    int32_t *slots = calloc(cap, sizeof(int32_t));
    if ( !keys || !slots )
    { free(keys); free(slots);
      return PL_resource_error("memory");
    }
    for ( size_t i = 0; i < d_atoms.size; i++ )
    { atom_t k = ((atom_t *)d_atoms.data)[i];
      size_t h = (k * 0x9E3779B97F4A7C15ULL) & (cap - 1);
      while ( slots[h] )
        h = (h + 1) & (cap - 1);
      keys[h] = k;
      slots[h] = (int32_t)i + 1;
    }
    free(atom_keys); free(atom_slots);
    atom_keys = keys; atom_slots = slots; atom_cap = cap;
  }
  size_t h = (a * 0x9E3779B97F4A7C15ULL) & (atom_cap - 1);
  while ( atom_slots[h] )
  { if ( atom_keys[h] == a )
    { *index = atom_slots[h] - 1;
      return TRUE;
    }
    h = (h + 1) & (atom_cap - 1);
  }
  if ( !grow(&d_atoms, sizeof(atom_t), 1) )
    return FALSE;
  PL_register_atom(a);
  ((atom_t *)d_atoms.data)[d_atoms.size] = a;
  *index = (int32_t)d_atoms.size++;
  atom_keys[h] = a;
  atom_slots[h] = *index + 1;
  return TRUE;
}

static int
push_cell(uint8_t tag, int64_t v)
{ if ( !grow(&d_tags, 1, 1) || !grow(&d_vals, sizeof(int64_t), 1) )
    return FALSE;
  ((uint8_t *)d_tags.data)[d_tags.size++] = tag;
  ((int64_t *)d_vals.data)[d_vals.size++] = v;
  return TRUE;
}

static int
push_json(term_t t)
{ fid_t fid = PL_open_foreign_frame();
  term_t av = PL_new_term_refs(2);
  char *s;
  size_t len;
  int rc = FALSE;

  if ( !fid )
    return FALSE;
  if ( PL_put_term(av, t) &&
       PL_call_predicate(NULL, PL_Q_PASS_EXCEPTION, json_text_pred, av) &&
       PL_get_nchars(av + 1, &len, &s, CVT_STRING|CVT_ATOM|REP_UTF8|CVT_EXCEPTION) &&
       grow(&d_texts, sizeof(char *), 1) )
  { char *copy = malloc(len + 1);
    if ( copy )
    { memcpy(copy, s, len + 1);
      ((char **)d_texts.data)[d_texts.size] = copy;
      rc = push_cell(3, (int64_t)d_texts.size++);
    } else
      rc = PL_resource_error("memory");
  }
  PL_close_foreign_frame(fid);
  return rc;
}

static int
push_value(term_t t)
{ int64_t i;
  double d;
  atom_t a;

  switch ( PL_term_type(t) )
  { case PL_INTEGER:
      if ( PL_get_int64(t, &i) )
        return push_cell(0, i);
      return push_json(t);
    case PL_FLOAT:
      if ( PL_get_float(t, &d) && isfinite(d) )
      { memcpy(&i, &d, sizeof i);
        return push_cell(1, i);
      }
      return push_json(t);
    case PL_ATOM:
    { int32_t index;
      if ( PL_get_atom(t, &a) && atom_index(a, &index) )
        return push_cell(2, index);
      return FALSE;
    }
    default:
      return push_json(t);
  }
}

static void
clear_detections(void)
{ for ( size_t i = 0; i < d_atoms.size; i++ )
    PL_unregister_atom(((atom_t *)d_atoms.data)[i]);
  for ( size_t i = 0; i < d_texts.size; i++ )
    free(((char **)d_texts.data)[i]);
  d_heads.size = d_arities.size = d_tags.size = d_vals.size = d_atoms.size = d_texts.size = 0;
  if ( atom_cap )
  { memset(atom_slots, 0, atom_cap * sizeof(int32_t));
  }
}

/* etalis_pack_detection(+Event, +T1, +T2) */
static foreign_t
pack_detection(term_t e, term_t t1, term_t t2)
{ atom_t name;
  size_t arity;
  int32_t index;
  term_t a = PL_new_term_ref();

  if ( !PL_get_name_arity(e, &name, &arity) )
    return type_error("callable", e);
  if ( !atom_index(name, &index) ||
       !grow(&d_heads, sizeof(int32_t), 1) || !grow(&d_arities, sizeof(int32_t), 1) )
    return FALSE;
  ((int32_t *)d_heads.data)[d_heads.size++] = index;
  ((int32_t *)d_arities.data)[d_arities.size++] = (int32_t)arity;
  for ( size_t i = 1; i <= arity; i++ )
  { _PL_get_arg(i, e, a);
    if ( !push_value(a) )
      return FALSE;
  }
  return push_value(t1) && push_value(t2);
}

/* etalis_packed_reset: forget the detections packed so far */
static foreign_t
packed_reset(void)
{ clear_detections();
  return TRUE;
}

/* etalis_packed_detections(-Layout, -Atoms, -Texts):
   Layout = packed(N, Heads, Arities, Cells, Tags, Values) with the
   addresses of the buffers (N detections, Cells cells); Atoms and Texts
   the lists of the atoms and JSON texts the indexes name.  The buffers
   stay until the next reset. */
static foreign_t
packed_detections(term_t layout, term_t atoms, term_t texts)
{ term_t list = PL_new_term_ref(), h = PL_new_term_ref();
  functor_t f = PL_new_functor(PL_new_atom("packed"), 6);

  if ( !PL_unify_term(layout, PL_FUNCTOR, f,
                      PL_INT64, (int64_t)d_heads.size,
                      PL_INT64, (int64_t)(intptr_t)d_heads.data,
                      PL_INT64, (int64_t)(intptr_t)d_arities.data,
                      PL_INT64, (int64_t)d_tags.size,
                      PL_INT64, (int64_t)(intptr_t)d_tags.data,
                      PL_INT64, (int64_t)(intptr_t)d_vals.data) )
    return FALSE;
  PL_put_nil(list);
  for ( size_t i = d_atoms.size; i-- > 0; )
  { if ( !PL_put_atom(h, ((atom_t *)d_atoms.data)[i]) || !PL_cons_list(list, h, list) )
      return FALSE;
  }
  if ( !PL_unify(atoms, list) )
    return FALSE;
  PL_put_nil(list);
  for ( size_t i = d_texts.size; i-- > 0; )
  { if ( !PL_put_chars(h, PL_STRING|REP_UTF8, (size_t)-1, ((char **)d_texts.data)[i]) ||
         !PL_cons_list(list, h, list) )
      return FALSE;
  }
  return PL_unify(texts, list);
}

/* Graph batches (see prolog/etalis/runtime/graph_batch.pl): the batch list of a
   batch of graph events from the parts of its text.  A code of the
   graphs' and triples' texts is a number that skips the surrogates,
   0xD800 to 0xDFFF: a position of the table from 1, or a count plus 1. */

static functor_t FUNCTOR_graph1;
static functor_t FUNCTOR_rdf_graph2;
static functor_t FUNCTOR_rdf_graph3;
static functor_t FUNCTOR_t3;

static size_t
code_number(pl_wchar_t c)
{ return c < 0xD800 ? (size_t)c : (size_t)c - 0x800;
}

static int
wide_text(term_t t, size_t *len, pl_wchar_t **s)
{ return PL_get_wchars(t, len, s, CVT_STRING|CVT_EXCEPTION|BUF_MALLOC);
}

/* etalis_graph_terms(+Atoms, +NAtoms, +Others, +Graphs, +Triples, +Count, -Terms):
   Atoms the batch's NAtoms atoms separated by newlines, Others the list
   of its other terms, Graphs five codes a graph (gap, name, time, stream,
   triples), Triples three codes a triple; Terms the batch list of Count
   elements.  A code outside the table or the texts is a domain error. */
static foreign_t
graph_terms(term_t atoms, term_t natoms, term_t others, term_t graphs, term_t triples,
            term_t count, term_t terms)
{ size_t alen = 0, glen = 0, tlen = 0, n_atoms, n_others = 0, lines;
  char *a = NULL;
  pl_wchar_t *g = NULL, *tr = NULL;
  term_t table = 0;
  int rc = FALSE;

  if ( !PL_get_size_ex(natoms, &n_atoms) || !PL_get_size_ex(count, &lines) )
    return FALSE;
  if ( PL_skip_list(others, 0, &n_others) != PL_LIST )
    return type_error("list", others);
  if ( !PL_get_nchars(atoms, &alen, &a, CVT_STRING|CVT_EXCEPTION|REP_UTF8|BUF_MALLOC) || !wide_text(graphs, &glen, &g) || !wide_text(triples, &tlen, &tr) )
    goto out;
  size_t n = n_atoms + n_others;
  table = n ? PL_new_term_refs((int)n) : 0;
  /* the atoms */
  size_t k = 0, start = 0;
  for ( size_t i = 0; n_atoms && i <= alen; i++ )
  { if ( i == alen || a[i] == '\n' )
    { if ( k == n_atoms || !PL_unify_chars(table + k, PL_ATOM|REP_UTF8, i - start, a + start) )
        goto bad;
      k++;
      start = i + 1;
    }
  }
  if ( k != n_atoms )
    goto bad;
  /* the other terms */
  { term_t head = PL_new_term_ref(), tail = PL_copy_term_ref(others);
    for ( size_t i = n_atoms; PL_get_list(tail, head, tail); i++ )
    { if ( !PL_put_term(table + i, head) )
        goto out;
    }
  }
  /* the list */
  { term_t tail = PL_copy_term_ref(terms), head = PL_new_term_ref();
    term_t list = PL_new_term_ref(), triple = PL_new_term_ref(), graph = PL_new_term_ref();
    term_t event = PL_new_term_ref();
    size_t line = 0, t = 0;

    if ( glen % 5 != 0 )
      goto bad;
    for ( size_t i = 0; i < glen; i += 5 )
    { size_t gap = code_number(g[i]) - 1, name = code_number(g[i+1]), time = code_number(g[i+2]);
      size_t stream = code_number(g[i+3]) - 1, size = code_number(g[i+4]) - 1;

      if ( g[i] == 0 || g[i+3] == 0 || g[i+4] == 0 || name < 1 || name > n || time < 1 || time > n ||
           stream > n || line + gap + 1 > lines || t + 3 * size > tlen )
        goto bad;
      for ( size_t j = 0; j < gap; j++ )
      { if ( !PL_unify_list(tail, head, tail) || !PL_unify_nil(head) )
          goto out;
      }
      line += gap + 1;
      PL_put_nil(list);
      for ( size_t j = t + 3 * size; j > t; j -= 3 )
      { size_t s = code_number(tr[j-3]), p = code_number(tr[j-2]), o = code_number(tr[j-1]);
        if ( s < 1 || s > n || p < 1 || p > n || o < 1 || o > n )
          goto bad;
        if ( !PL_cons_functor(triple, FUNCTOR_t3, table + s - 1, table + p - 1, table + o - 1) ||
             !PL_cons_list(list, triple, list) )
          goto out;
      }
      t += 3 * size;
      if ( !(stream == 0 ? PL_cons_functor(graph, FUNCTOR_rdf_graph2, table + name - 1, list)
                         : PL_cons_functor(graph, FUNCTOR_rdf_graph3, table + name - 1, list, table + stream - 1)) ||
           !PL_cons_functor(graph, FUNCTOR_graph1, graph) ||
           !PL_cons_functor(event, FUNCTOR_event2, graph, table + time - 1) ||
           !PL_unify_list(tail, head, tail) || !PL_unify(head, event) )
        goto out;
    }
    if ( t != tlen )
      goto bad;
    for ( ; line < lines; line++ )
    { if ( !PL_unify_list(tail, head, tail) || !PL_unify_nil(head) )
        goto out;
    }
    rc = PL_unify_nil(tail);
    goto out;
  }
bad:
  rc = PL_domain_error("graph_batch", graphs);
out:
  if ( a ) PL_free(a);
  if ( g ) PL_free(g);
  if ( tr ) PL_free(tr);
  return rc;
}

/* -- batch lists read without Prolog's reader ----------------------------

   The text of a batch list of plain events (see batches.pl's list_terms/3)
   in its common shape, `[event(Name(A1, ..., Ak), T),\n...]`, each Ai an
   integer of at most 18 digits, a float written with a fraction or an
   atom of letters, digits and underscores starting with a lower-case
   letter, T such a number or a list `[T1, T2]` of two, is turned into
   its terms here; any other text is left to term_string/2, so that the
   terms are always the ones Prolog's reader gives. */

#define MAX_LIST_ARGS 32

typedef struct
{ const char *s;
  const char *end;
} cursor;

static int
layout_char(char c)
{ return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int
digit_char(char c)
{ return c >= '0' && c <= '9';
}

static int
name_char(char c)
{ return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || digit_char(c) || c == '_';
}

static void
skip_layout(cursor *c)
{ while ( c->s < c->end && layout_char(*c->s) )
    c->s++;
}

/* What may follow a number or an atom that ends there. */
static int
ends_token(const cursor *c, const char *p)
{ return p == c->end || layout_char(*p) || *p == ',' || *p == ')' || *p == ']';
}

static int
take_char(cursor *c, char ch)
{ skip_layout(c);
  if ( c->s < c->end && *c->s == ch )
  { c->s++;
    return TRUE;
  }
  return FALSE;
}

typedef struct
{ int is_float;
  int64_t i;
  double d;
} number;

/* A number as Prolog reads it: -?digits, or -?digits.digits with an
   optional exponent, into t and *n; FALSE (no exception) for any other
   text. */
static int
take_number(cursor *c, term_t t, number *n)
{ const char *start, *p, *digits;

  skip_layout(c);
  start = p = c->s;
  n->is_float = FALSE;
  if ( p < c->end && *p == '-' )
    p++;
  digits = p;
  while ( p < c->end && digit_char(*p) )
    p++;
  if ( p == digits )
    return FALSE;
  if ( p + 1 < c->end && *p == '.' && digit_char(p[1]) )
  { n->is_float = TRUE;
    for ( p++; p < c->end && digit_char(*p); p++ )
      ;
    if ( p < c->end && (*p == 'e' || *p == 'E') )
    { const char *q = p + 1;
      if ( q < c->end && (*q == '+' || *q == '-') )
        q++;
      if ( q == c->end || !digit_char(*q) )
        return FALSE;
      while ( q < c->end && digit_char(*q) )
        q++;
      p = q;
    }
  }
  if ( !ends_token(c, p) )
    return FALSE;
  if ( n->is_float )
  { char buf[64];
    size_t len = (size_t)(p - start);

    if ( len >= sizeof(buf) )
      return FALSE;
    memcpy(buf, start, len);
    buf[len] = '\0';
    errno = 0;
    n->d = strtod(buf, NULL);
    if ( errno != 0 || !isfinite(n->d) || !PL_put_float(t, n->d) )
      return FALSE;
  } else
  { int64_t v = 0;

    if ( p - digits > 18 )
      return FALSE;
    for ( const char *d = digits; d < p; d++ )
      v = v * 10 + (*d - '0');
    n->i = *start == '-' ? -v : v;
    if ( !PL_put_int64(t, n->i) )
      return FALSE;
  }
  c->s = p;
  return TRUE;
}

/* Whether number a is known to be at most b (FALSE if it is not, or if
   an integer beyond 2^53 meets a float). */
static int
known_at_most(const number *a, const number *b)
{ const int64_t exact = (int64_t)1 << 53;

  if ( !a->is_float && !b->is_float )
    return a->i <= b->i;
  if ( (!a->is_float && (a->i > exact || a->i < -exact)) || (!b->is_float && (b->i > exact || b->i < -exact)) )
    return FALSE;
  return (a->is_float ? a->d : (double)a->i) <= (b->is_float ? b->d : (double)b->i);
}

/* An atom of [a-z][A-Za-z0-9_]*, its length in *len. */
static int
take_name(cursor *c, const char **name, size_t *len)
{ const char *p;

  skip_layout(c);
  p = c->s;
  if ( p == c->end || *p < 'a' || *p > 'z' )
    return FALSE;
  while ( p < c->end && name_char(*p) )
    p++;
  *name = c->s;
  *len = (size_t)(p - c->s);
  c->s = p;
  return TRUE;
}

static int
take_atom(cursor *c, term_t t)
{ const char *name;
  size_t len;
  atom_t a;

  if ( !take_name(c, &name, &len) || !ends_token(c, c->s) )
    return FALSE;
  a = PL_new_atom_nchars(len, name);
  PL_put_atom(t, a);
  PL_unregister_atom(a);
  return TRUE;
}

static int
take_arg(cursor *c, term_t t)
{ skip_layout(c);
  if ( c->s < c->end && (*c->s == '-' || digit_char(*c->s)) )
  { number n;
    return take_number(c, t, &n);
  }
  return take_atom(c, t);
}

#define MAX_LIST_NAMES 64

/* The distinct heads (name and arity) of a batch's events, each name's
   atom held until the batch is read, and whether every interval of it is
   known to start no later than it ends (and every head is here). */
typedef struct
{ const char *text[MAX_LIST_NAMES];
  size_t len[MAX_LIST_NAMES];
  size_t arity[MAX_LIST_NAMES];
  atom_t names[MAX_LIST_NAMES];
  functor_t functors[MAX_LIST_NAMES];
  size_t count;
  int valid;
} batch_names;

static void
release_names(batch_names *b)
{ for ( size_t i = 0; i < b->count; i++ )
    PL_unregister_atom(b->names[i]);
  b->count = 0;
}

/* Put the head of name/arity (its atom if arity is 0, else a term of it
   with args) into t. */
static int
put_head(batch_names *b, term_t t, const char *name, size_t len, size_t arity, term_t args)
{ atom_t a;
  functor_t f;
  int ok;

  for ( size_t i = 0; i < b->count; i++ )
  { if ( b->len[i] == len && b->arity[i] == arity && memcmp(b->text[i], name, len) == 0 )
      return arity ? PL_cons_functor_v(t, b->functors[i], args) : PL_put_atom(t, b->names[i]);
  }
  a = PL_new_atom_nchars(len, name);
  f = arity ? PL_new_functor(a, arity) : 0;
  ok = arity ? PL_cons_functor_v(t, f, args) : PL_put_atom(t, a);
  if ( b->count == MAX_LIST_NAMES )
  { b->valid = FALSE;                   /* its name is not listed: not checked */
    PL_unregister_atom(a);
  } else
  { b->text[b->count] = name;
    b->len[b->count] = len;
    b->arity[b->count] = arity;
    b->names[b->count] = a;
    b->functors[b->count] = f;
    b->count++;
  }
  return ok;
}

/* event(Name(Args), Time), into t; args and time are scratch refs. */
static int
take_event(cursor *c, term_t t, term_t args, term_t time, batch_names *b)
{ const char *name;
  size_t len, arity = 0;
  number t1, t2;

  skip_layout(c);
  if ( c->end - c->s < 6 || memcmp(c->s, "event(", 6) != 0 )
    return FALSE;
  c->s += 6;
  if ( !take_name(c, &name, &len) )
    return FALSE;
  if ( c->s < c->end && *c->s == '(' )
  { c->s++;
    do
    { if ( arity == MAX_LIST_ARGS || !take_arg(c, args + arity) )
        return FALSE;
      arity++;
    } while ( take_char(c, ',') );
    if ( !take_char(c, ')') )
      return FALSE;
  } else if ( !ends_token(c, c->s) )
    return FALSE;
  if ( !put_head(b, t, name, len, arity, args) || !take_char(c, ',') )
    return FALSE;
  skip_layout(c);
  if ( c->s < c->end && *c->s == '[' )
  { c->s++;
    if ( !take_number(c, args, &t1) || !take_char(c, ',') || !take_number(c, args + 1, &t2) ||
         !take_char(c, ']') )
      return FALSE;
    if ( !known_at_most(&t1, &t2) )
      b->valid = FALSE;
    if ( !PL_put_nil(time) || !PL_cons_list(time, args + 1, time) || !PL_cons_list(time, args, time) )
      return FALSE;
  } else if ( !take_number(c, time, &t1) )
    return FALSE;
  return take_char(c, ')') && PL_cons_functor(t, FUNCTOR_event2, t, time);
}

/* etalis_list_terms(+Text, +Count, -Terms, -Names): Text, a batch list
   of Count events in the shape above, as its list of terms; Names the
   list of their distinct names if every interval starts no later than it
   ends (the events are then valid input events if their names are),
   else `unchecked`.  Fails (leaving no exception but one of a full
   stack) for any other text. */
static foreign_t
list_terms(term_t text, term_t count, term_t terms, term_t names)
{ size_t len, n = 0;
  int64_t want;
  char *s = NULL;
  cursor c;
  term_t tail, head, event, args, time;
  batch_names b;
  int rc = FALSE;

  b.count = 0;
  b.valid = TRUE;
  if ( !PL_get_int64(count, &want) || want < 0 )    /* no list is that long */
    return FALSE;
  if ( localeconv()->decimal_point[0] != '.' )      /* strtod reads the locale's point */
    return FALSE;
  /* a copy of its own: the heads point into it as the terms are made */
  if ( !PL_get_nchars(text, &len, &s, CVT_STRING|CVT_ATOM|BUF_MALLOC) )
    return FALSE;
  c.s = s;
  c.end = s + len;
  /* a full local stack gives 0 refs and a resource error */
  if ( !(tail = PL_copy_term_ref(terms)) || !(head = PL_new_term_ref()) || !(event = PL_new_term_ref()) ||
       !(time = PL_new_term_ref()) || !(args = PL_new_term_refs(MAX_LIST_ARGS)) || !take_char(&c, '[') )
    goto out;
  if ( !take_char(&c, ']') )
  { do
    { if ( n == (size_t)want || !take_event(&c, event, args, time, &b) ||
           !PL_unify_list(tail, head, tail) || !PL_unify(head, event) )
        goto out;
      n++;
    } while ( take_char(&c, ',') );
    if ( !take_char(&c, ']') )
      goto out;
  }
  skip_layout(&c);
  if ( c.s != c.end || n != (size_t)want || !PL_unify_nil(tail) )
    goto out;
  if ( !b.valid )
  { rc = PL_unify_atom_chars(names, "unchecked");
    goto out;
  }
  if ( !(tail = PL_copy_term_ref(names)) )
    goto out;
  for ( size_t i = 0; i < b.count; i++ )
  { if ( !PL_unify_list(tail, head, tail) || !PL_unify_atom(head, b.names[i]) )
      goto out;
  }
  rc = PL_unify_nil(tail);
out:
  release_names(&b);
  PL_free(s);
  return rc;
}

/* -- detections written as JSON lines ------------------------------------

   A detection whose arguments are all numbers, unbound, or texts of at
   most 256 printable ASCII characters without a quote or a backslash
   (as etalis_protocol's plain_text/1) is written here, in the bytes
   etalis_protocol's write_detection/2 writes; any other is left to it. */

typedef struct
{ char *buf;                            /* first the stack's space, on the heap when that is full */
  size_t len;
  size_t size;
  int short_floats;                     /* floats by short_float() where it can */
  int on_heap;
} line_buffer;

static atom_t ATOM_float_format;
static atom_t ATOM_nil_list;                /* [], which is not the atom '[]' */
static atom_t ATOM_empty;

static int
put_bytes(line_buffer *b, const char *s, size_t len)
{ if ( b->len + len > b->size )
  { size_t size = 2 * b->size;
    char *buf;

    while ( size < b->len + len )
      size *= 2;
    if ( b->on_heap )
    { if ( !(buf = realloc(b->buf, size)) )
        return FALSE;
    } else
    { if ( !(buf = malloc(size)) )
        return FALSE;
      memcpy(buf, b->buf, b->len);
      b->on_heap = TRUE;
    }
    b->buf = buf;
    b->size = size;
  }
  memcpy(b->buf + b->len, s, len);
  b->len += len;
  return TRUE;
}

static int
put_str(line_buffer *b, const char *s)
{ return put_bytes(b, s, strlen(s));
}

/* A float d of at least 1e-4 and below 1e15 in magnitude (or zero)
   whose shortest decimal that reads back as d has at most 15 digits, as
   write/1 writes it: SWI-Prolog writes those digits in the form of C's
   %.15g, here with the point in place and ".0" if there is no fraction.
   That decimal is m / 10^k for the fewest fraction digits k at which
   the integer m nearest d * 10^k, over 10^k, is d again: m (below
   10^15) and 10^k are exact doubles, so the quotient is rounded once, as
   reading the decimal rounds it; d * 10^k as computed is within 0.25 of
   m, so rounding it finds m; and no other decimal of as many digits
   reads back as d (two differ by 10^-k, more than a unit of d's last
   bit).  Returns the length written into s, or 0 for any other d (then
   Prolog writes it). */
static size_t
short_float(double d, char s[40])
{ static const double tens[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
                                 1e14, 1e15, 1e16, 1e17, 1e18, 1e19 };
  double a = fabs(d);
  char digits[24];
  int len, k;
  size_t n = 0;
  int64_t m;

  if ( !(a == 0.0 || (a >= 1e-4 && a < 1e15)) )
    return 0;
  for ( k = 0; ; k++ )
  { double scaled = a * tens[k];

    if ( scaled >= 1e15 || k == 19 )
      return 0;
    m = llround(scaled);
    if ( (double)m / tens[k] == a )
      break;
  }
  len = snprintf(digits, sizeof(digits), "%" PRId64, m);
  if ( len <= 0 )
    return 0;
  if ( signbit(d) )
    s[n++] = '-';
  if ( len <= k )                               /* 0.0ddd: zeros after the point */
  { memcpy(s + n, "0.", 2);
    n += 2;
    memset(s + n, '0', (size_t)(k - len));
    n += (size_t)(k - len);
    memcpy(s + n, digits, (size_t)len);
    n += (size_t)len;
  } else
  { memcpy(s + n, digits, (size_t)(len - k));
    n += (size_t)(len - k);
    s[n++] = '.';
    if ( k == 0 )
      s[n++] = '0';
    memcpy(s + n, digits + len - k, (size_t)k);
    n += (size_t)k;
  }
  return n;
}

/* The decimal digits of i (with its sign) in s; their count. */
static size_t
int64_digits(int64_t i, char s[24])
{ char rev[24];
  size_t n = 0, r = 0;
  uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;

  do
  { rev[r++] = (char)('0' + u % 10);
    u /= 10;
  } while ( u );
  if ( i < 0 )
    s[n++] = '-';
  while ( r )
    s[n++] = rev[--r];
  return n;
}

/* A float d of at least 1e-4 and below 1e15 in magnitude that needs 16
   or 17 significant digits to read back as d (short_float() found no
   fewer), as write/1 writes it: the shortest digits that read back, the
   nearest of them to d, with the point in place.  %.15e and %.16e give
   the nearest decimal of 16 and 17 digits, correctly rounded; if the
   nearest of 16 does not read back, none of 16 does unless d is a power
   of two (its neighbours are unevenly far apart, so a farther decimal
   may read back where the nearest does not): that d is left to Prolog,
   as is any other.  Returns the length written into s, or 0. */
static size_t
long_float(double d, char s[40])
{ char e[40], digits[24];
  double a = fabs(d);
  int prec, exp10, len = 0, k;
  size_t n = 0;
  char *end;

  if ( !(a >= 1e-4 && a < 1e15) )
    return 0;
  for ( prec = 16; prec <= 17; prec++ )
  { int written = snprintf(e, sizeof(e), "%.*e", prec - 1, a);

    if ( written <= 0 || (size_t)written >= sizeof(e) )
      return 0;
    if ( strtod(e, NULL) == a )
      break;
    if ( prec == 16 )
    { int two;
      if ( frexp(a, &two) == 0.5 )       /* a power of two */
        return 0;
    }
  }
  if ( prec > 17 )
    return 0;
  for ( const char *c = e; *c && *c != 'e'; c++ )   /* d.ddd...e+XX: the digits */
  { if ( *c >= '0' && *c <= '9' )
      digits[len++] = *c;
  }
  end = strchr(e, 'e');
  if ( !end || len != prec )
    return 0;
  exp10 = (int)strtol(end + 1, NULL, 10);
  while ( len > 1 && digits[len - 1] == '0' )   /* as the shortest digits have none at the end */
    len--;
  /* the value is 0.digits * 10^(exp10 + 1): digits before the point */
  k = exp10 + 1;
  if ( signbit(d) )
    s[n++] = '-';
  if ( k <= 0 )
  { memcpy(s + n, "0.", 2);
    n += 2;
    memset(s + n, '0', (size_t)(-k));
    n += (size_t)(-k);
    memcpy(s + n, digits, (size_t)len);
    n += (size_t)len;
  } else if ( k < len )
  { memcpy(s + n, digits, (size_t)k);
    n += (size_t)k;
    s[n++] = '.';
    memcpy(s + n, digits + k, (size_t)(len - k));
    n += (size_t)(len - k);
  } else
    return 0;                                   /* a whole number of 16 digits: not in range */
  return n;
}

/* A number as write/1 writes it; a float that is not finite as null if
   null_if_not_finite (an argument), else not here (a time, which
   write_detection/2 writes as write/1 does). */
static int
put_number(line_buffer *b, term_t t, int null_if_not_finite)
{ char *s;
  size_t len;

  if ( PL_is_float(t) )
  { double d;
    char text[40];
    if ( !PL_get_float(t, &d) )
      return FALSE;
    if ( !isfinite(d) )
      return null_if_not_finite && put_str(b, "null");
    if ( b->short_floats && ((len = short_float(d, text)) || (len = long_float(d, text))) )
      return put_bytes(b, text, len);
  } else if ( !PL_is_integer(t) )
    return FALSE;
  else
  { int64_t i;
    if ( PL_get_int64(t, &i) )          /* not a big integer: its digits here */
    { char digits[24];
      size_t n = int64_digits(i, digits);
      return put_bytes(b, digits, n);
    }
  }
  if ( !PL_get_nchars(t, &len, &s, CVT_INTEGER|CVT_FLOAT|BUF_STACK) )
    return FALSE;
  return put_bytes(b, s, len);
}

static int
put_plain_text(line_buffer *b, term_t t)
{ const char *s = NULL;
  char *copy;
  size_t len;
  atom_t a;

  /* an atom's or a string's own text where it is one byte a character
     (no copy: a copy on the stack of buffers costs more than the line) */
  if ( PL_get_atom(t, &a) )
  { if ( a == ATOM_nil_list )                  /* [], not an atom of text: left to Prolog */
      return FALSE;
    s = PL_atom_nchars(a, &len);
  } else if ( PL_is_string(t) && PL_get_string(t, &copy, &len) )
    s = copy;
  if ( !s )
  { if ( !PL_get_nchars(t, &len, &copy, CVT_ATOM|CVT_STRING|BUF_STACK) )
      return FALSE;
    s = copy;
  }
  if ( len > 256 )
    return FALSE;
  for ( size_t i = 0; i < len; i++ )
  { unsigned char c = (unsigned char)s[i];
    if ( c < ' ' || c >= 127 || c == '"' || c == '\\' )
      return FALSE;
  }
  return put_str(b, "\"") && put_bytes(b, s, len) && put_str(b, "\"");
}

static int
put_value(line_buffer *b, term_t t)
{ switch ( PL_term_type(t) )
  { case PL_VARIABLE:
      return put_str(b, "null");
    case PL_INTEGER:
    case PL_FLOAT:
      return put_number(b, t, TRUE);
    case PL_ATOM:
    case PL_STRING:
      return put_plain_text(b, t);
    default:
      return FALSE;
  }
}

static int
detection_line(line_buffer *b, int object, term_t e, term_t t1, term_t t2)
{ term_t name = PL_new_term_ref(), arg = PL_new_term_ref();
  atom_t a;
  size_t arity;

  if ( !name || !arg )                  /* a full local stack: a resource error */
    return FALSE;
  if ( PL_get_atom(e, &a) )
  { arity = 0;
    PL_put_atom(name, a);
  } else if ( PL_get_name_arity(e, &a, &arity) )
    PL_put_atom(name, a);
  else
    return FALSE;
  if ( !put_str(b, object ? "{\"event\": " : "[") || !put_plain_text(b, name) ||
       !put_str(b, object ? ", \"args\": [" : ", [") )
    return FALSE;
  for ( size_t i = 1; i <= arity; i++ )
  { _PL_get_arg(i, e, arg);
    if ( (i > 1 && !put_str(b, ", ")) || !put_value(b, arg) )
      return FALSE;
  }
  return put_str(b, object ? "], \"start\": " : "], ") && put_number(b, t1, FALSE) &&
         put_str(b, object ? ", \"end\": " : ", ") && put_number(b, t2, FALSE) &&
         put_str(b, object ? "}\n" : "]\n");
}

/* Write the line buf (printable ASCII, one newline, at its end) to out,
   a stream of ASCII-compatible bytes: into its buffer at once where it
   has room, keeping its position as Sputc() keeps it a byte at a time
   (which costs ten times more: character_count/2 reads it); else by
   Sfwrite(). */
static int
ascii_line_written(IOSTREAM *out, const char *buf, size_t len)
{ if ( len && buf[len - 1] == '\n' && !out->tee && (out->flags & SIO_FBUF) &&
       !(out->flags & (SIO_LBUF|SIO_NBUF)) && out->bufp && out->limitp &&
       (size_t)(out->limitp - out->bufp) > len )
  { memcpy(out->bufp, buf, len);
    out->bufp += len;
    out->lastc = '\n';
    if ( out->position )
    { out->position->byteno += (int64_t)len;
      out->position->charno += (int64_t)len;
      out->position->lineno++;
      out->position->linepos = 0;
      out->flags &= ~SIO_NOLINEPOS;
    }
    return TRUE;
  }
  return Sfwrite(buf, 1, len, out) == len;
}

/* etalis_write_detection(+Format, +E, +T1, +T2): write the detection of E
   over [T1, T2] to the current output as a line of JSON of Format
   (object or row), if it is of the kind above; else fail, writing
   nothing. */
static foreign_t
write_detection(term_t format, term_t e, term_t t1, term_t t2)
{ atom_t f;
  int object, rc;
  char space[512];
  line_buffer b = { space, 0, sizeof(space), FALSE, FALSE };
  IOSTREAM *out;
  atom_t float_format;

  if ( !PL_get_atom(format, &f) || (f != ATOM_object && f != ATOM_row) )
    return FALSE;
  /* write/1 writes floats as the flag float_format says, if it is set */
  b.short_floats = !PL_current_prolog_flag(ATOM_float_format, PL_ATOM, &float_format) || float_format == ATOM_empty;
  object = f == ATOM_object;
  rc = detection_line(&b, object, e, t1, t2);
  if ( rc )
  { if ( !(out = PL_acquire_stream(Scurrent_output)) )
      rc = FALSE;
    else
    { /* the line is ASCII: its bytes are its codes, unless the stream
         writes a newline as \r\n */
      if ( (out->encoding == ENC_UTF8 || out->encoding == ENC_ASCII || out->encoding == ENC_ISO_LATIN_1) &&
           out->newline != SIO_NL_DOS )
        rc = ascii_line_written(out, b.buf, b.len);
      else
      { for ( size_t i = 0; rc && i < b.len; i++ )
          rc = Sputcode((unsigned char)b.buf[i], out) >= 0;
      }
      rc = PL_release_stream(out) && rc;
    }
  }
  if ( b.on_heap )
    free(b.buf);
  return rc;
}

/* -- the note of the event being fed ------------------------------------

   etalis_feed's quick loop notes before each event its input line and
   the characters written to the current output before it, which the
   handler of an event stopped at a limit and the watchdog read: here in
   two numbers of the thread's own, one call an event (character_count/2
   and two nb_setarg/3 took three).  A line is a positive integer, or
   start (before the first event) or none (after the last). */

static __thread int64_t note_line = -2;
static __thread int64_t note_kept = 0;
static atom_t ATOM_start;
static atom_t ATOM_none;

#define NOTE_START (-1)
#define NOTE_NONE (-2)

/* etalis_note(+Line): note Line and the current output's character
   count; fails if that output keeps no position. */
static foreign_t
note_event(term_t line)
{ int64_t l;
  IOSTREAM *out = Scurrent_output;

  if ( !PL_get_int64_ex(line, &l) )
    return FALSE;
  if ( !out || !out->position )
    return FALSE;
  note_line = l;
  note_kept = out->position->charno;
  return TRUE;
}

/* etalis_note_set(+Line, +Kept): note Line (an integer, start or none)
   and Kept. */
static foreign_t
note_set(term_t line, term_t kept)
{ int64_t l, k;
  atom_t a;

  if ( PL_get_atom(line, &a) && (a == ATOM_start || a == ATOM_none) )
    l = a == ATOM_start ? NOTE_START : NOTE_NONE;
  else if ( !PL_get_int64_ex(line, &l) )
    return FALSE;
  else if ( l < 0 )
    return PL_domain_error("not_less_than_zero", line);
  if ( !PL_get_int64_ex(kept, &k) )
    return FALSE;
  note_line = l;
  note_kept = k;
  return TRUE;
}

/* etalis_noted(-Line, -Kept): what the note holds. */
static foreign_t
noted(term_t line, term_t kept)
{ int rc = note_line >= 0 ? PL_unify_int64(line, note_line)
                          : PL_unify_atom(line, note_line == NOTE_START ? ATOM_start : ATOM_none);
  return rc && PL_unify_int64(kept, note_kept);
}

install_t
install_etalis_columns(void)
{ term_t nil = PL_new_term_ref();

  PL_put_nil(nil);
  if ( !PL_get_atom(nil, &ATOM_nil_list) )
    ATOM_nil_list = 0;
  FUNCTOR_event2 = PL_new_functor(PL_new_atom("event"), 2);
  ATOM_start = PL_new_atom("start");
  ATOM_none = PL_new_atom("none");
  FUNCTOR_columns4 = PL_new_functor(PL_new_atom("columns"), 4);
  FUNCTOR_col3 = PL_new_functor(PL_new_atom("col"), 3);
  FUNCTOR_all1 = PL_new_functor(PL_new_atom("all"), 1);
  FUNCTOR_heads2 = PL_new_functor(PL_new_atom("heads"), 2);
  FUNCTOR_slash2 = PL_new_functor(PL_new_atom("/"), 2);
  ATOM_interval = PL_new_atom("interval");
  ATOM_point = PL_new_atom("point");
  ATOM_object = PL_new_atom("object");
  ATOM_row = PL_new_atom("row");
  ATOM_float_format = PL_new_atom("float_format");
  ATOM_empty = PL_new_atom("");
  PL_register_foreign_in_module("etalis_columns", "etalis_column_terms", 3, column_terms, 0);
  json_text_pred = PL_predicate("json_arg_text", 2, "etalis_protocol");
  PL_register_foreign_in_module("etalis_columns", "etalis_pack_detection", 3, pack_detection, 0);
  PL_register_foreign_in_module("etalis_columns", "etalis_packed_reset", 0, packed_reset, 0);
  PL_register_foreign_in_module("etalis_columns", "etalis_packed_detections", 3, packed_detections, 0);
  FUNCTOR_graph1 = PL_new_functor(PL_new_atom("graph"), 1);
  FUNCTOR_rdf_graph2 = PL_new_functor(PL_new_atom("rdf_graph"), 2);
  FUNCTOR_rdf_graph3 = PL_new_functor(PL_new_atom("rdf_graph"), 3);
  FUNCTOR_t3 = PL_new_functor(PL_new_atom("t"), 3);
  PL_register_foreign_in_module("etalis_columns", "etalis_graph_terms", 7, graph_terms, 0);
  PL_register_foreign_in_module("etalis_columns", "etalis_list_terms", 4, list_terms, 0);
  PL_register_foreign_in_module("etalis_columns", "etalis_write_detection", 4, write_detection, 0);
  PL_register_foreign_in_module("etalis_columns", "etalis_note", 1, note_event, 0);
  PL_register_foreign_in_module("etalis_columns", "etalis_note_set", 2, note_set, 0);
  PL_register_foreign_in_module("etalis_columns", "etalis_noted", 2, noted, 0);
}
