-- HDB++ schema rendered by hdbbench (hdbbench schema sql); see schemas/README.md

CREATE DOMAIN uchar AS numeric(3,0) CHECK (VALUE >= 0 AND VALUE <= 255);

CREATE DOMAIN ushort AS numeric(5,0) CHECK (VALUE >= 0 AND VALUE <= 65535);

CREATE DOMAIN ulong AS numeric(10,0) CHECK (VALUE >= 0 AND VALUE <= 4294967295);

CREATE DOMAIN ulong64 AS numeric(20,0) CHECK (VALUE >= 0 AND VALUE <= 18446744073709551615);

CREATE TABLE att_conf_type (
    att_conf_type_id serial NOT NULL,
    type text NOT NULL,
    type_num smallint NOT NULL,
    PRIMARY KEY (att_conf_type_id),
    UNIQUE (type),
    UNIQUE (type_num)
);
COMMENT ON TABLE att_conf_type IS 'Attribute data type';

CREATE TABLE att_conf_format (
    att_conf_format_id serial NOT NULL,
    format text NOT NULL,
    format_num smallint NOT NULL,
    PRIMARY KEY (att_conf_format_id),
    UNIQUE (format),
    UNIQUE (format_num)
);
COMMENT ON TABLE att_conf_format IS 'Attribute format type';

CREATE TABLE att_conf_write (
    att_conf_write_id serial NOT NULL,
    write text NOT NULL,
    write_num smallint NOT NULL,
    PRIMARY KEY (att_conf_write_id),
    UNIQUE (write),
    UNIQUE (write_num)
);
COMMENT ON TABLE att_conf_write IS 'Attribute write type';

CREATE TABLE att_conf (
    att_conf_id serial NOT NULL,
    att_name text NOT NULL,
    att_conf_type_id smallint NOT NULL,
    att_conf_format_id smallint NOT NULL,
    att_conf_write_id smallint NOT NULL,
    table_name text NOT NULL,
    cs_name text NOT NULL DEFAULT '',
    domain text NOT NULL DEFAULT '',
    family text NOT NULL DEFAULT '',
    member text NOT NULL DEFAULT '',
    name text NOT NULL DEFAULT '',
    ttl integer,
    hide boolean DEFAULT false,
    PRIMARY KEY (att_conf_id),
    UNIQUE (att_name),
    FOREIGN KEY (att_conf_type_id) REFERENCES att_conf_type (att_conf_type_id),
    FOREIGN KEY (att_conf_format_id) REFERENCES att_conf_format (att_conf_format_id),
    FOREIGN KEY (att_conf_write_id) REFERENCES att_conf_write (att_conf_write_id)
);
COMMENT ON TABLE att_conf IS 'Attribute Configuration Table';
CREATE INDEX att_conf_att_conf_id_idx ON att_conf (att_conf_id);
CREATE INDEX att_conf_att_conf_type_id_idx ON att_conf (att_conf_type_id);

CREATE TABLE att_history_event (
    att_history_event_id serial NOT NULL,
    event text NOT NULL,
    PRIMARY KEY (att_history_event_id)
);
COMMENT ON TABLE att_history_event IS 'Attribute history events description';
CREATE INDEX att_history_att_history_event_id_idx ON att_history_event (att_history_event_id);

CREATE TABLE att_history (
    att_conf_id integer NOT NULL,
    att_history_event_id integer NOT NULL,
    event_time timestamp with time zone NOT NULL,
    details json,
    PRIMARY KEY (att_conf_id, event_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_history_event_id) REFERENCES att_history_event (att_history_event_id)
);
COMMENT ON TABLE att_history IS 'Attribute Configuration Events History Table';
CREATE INDEX att_history_att_conf_id_inx ON att_history (att_conf_id);

CREATE TABLE att_parameter (
    att_conf_id integer NOT NULL,
    recv_time timestamp with time zone NOT NULL,
    label text NOT NULL DEFAULT '',
    unit text NOT NULL DEFAULT '',
    standard_unit text NOT NULL DEFAULT '',
    display_unit text NOT NULL DEFAULT '',
    format text NOT NULL DEFAULT '',
    archive_rel_change text NOT NULL DEFAULT '',
    archive_abs_change text NOT NULL DEFAULT '',
    archive_period text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    details json,
    enum_labels text[] NOT NULL DEFAULT '{}'::text[],
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id)
);
COMMENT ON TABLE att_parameter IS 'Attribute configuration parameters';
CREATE INDEX att_parameter_recv_time_idx ON att_parameter (recv_time);
CREATE INDEX att_parameter_att_conf_id_idx ON att_parameter (att_conf_id);

CREATE TABLE att_error_desc (
    att_error_desc_id serial NOT NULL,
    error_desc text NOT NULL,
    PRIMARY KEY (att_error_desc_id),
    UNIQUE (error_desc)
);
COMMENT ON TABLE att_error_desc IS 'Error Description Table';
CREATE INDEX att_error_desc_att_error_desc_id_idx ON att_error_desc (att_error_desc_id);

CREATE TABLE att_scalar_devboolean (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r boolean,
    value_w boolean,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devboolean IS 'Scalar Boolean Values Table';
CREATE INDEX att_scalar_devboolean_att_conf_id_idx ON att_scalar_devboolean (att_conf_id);
CREATE INDEX att_scalar_devboolean_att_conf_id_data_time_idx ON att_scalar_devboolean (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devshort (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r smallint,
    value_w smallint,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devshort IS 'Scalar Short Values Table';
CREATE INDEX att_scalar_devshort_att_conf_id_idx ON att_scalar_devshort (att_conf_id);
CREATE INDEX att_scalar_devshort_att_conf_id_data_time_idx ON att_scalar_devshort (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devlong (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r integer,
    value_w integer,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devlong IS 'Scalar Long Values Table';
CREATE INDEX att_scalar_devlong_att_conf_id_idx ON att_scalar_devlong (att_conf_id);
CREATE INDEX att_scalar_devlong_att_conf_id_data_time_idx ON att_scalar_devlong (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devfloat (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r real,
    value_w real,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devfloat IS 'Scalar Float Values Table';
CREATE INDEX att_scalar_devfloat_att_conf_id_idx ON att_scalar_devfloat (att_conf_id);
CREATE INDEX att_scalar_devfloat_att_conf_id_data_time_idx ON att_scalar_devfloat (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devdouble (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r double precision,
    value_w double precision,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devdouble IS 'Scalar Double Values Table';
CREATE INDEX att_scalar_devdouble_att_conf_id_idx ON att_scalar_devdouble (att_conf_id);
CREATE INDEX att_scalar_devdouble_att_conf_id_data_time_idx ON att_scalar_devdouble (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devushort (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r ushort,
    value_w ushort,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devushort IS 'Scalar Ushort Values Table';
CREATE INDEX att_scalar_devushort_att_conf_id_idx ON att_scalar_devushort (att_conf_id);
CREATE INDEX att_scalar_devushort_att_conf_id_data_time_idx ON att_scalar_devushort (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devulong (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r ulong,
    value_w ulong,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devulong IS 'Scalar Ulong Values Table';
CREATE INDEX att_scalar_devulong_att_conf_id_idx ON att_scalar_devulong (att_conf_id);
CREATE INDEX att_scalar_devulong_att_conf_id_data_time_idx ON att_scalar_devulong (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devstring (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r text,
    value_w text,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devstring IS 'Scalar String Values Table';
CREATE INDEX att_scalar_devstring_att_conf_id_idx ON att_scalar_devstring (att_conf_id);
CREATE INDEX att_scalar_devstring_att_conf_id_data_time_idx ON att_scalar_devstring (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devstate (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r integer,
    value_w integer,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devstate IS 'Scalar State Values Table';
CREATE INDEX att_scalar_devstate_att_conf_id_idx ON att_scalar_devstate (att_conf_id);
CREATE INDEX att_scalar_devstate_att_conf_id_data_time_idx ON att_scalar_devstate (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devuchar (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r uchar,
    value_w uchar,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devuchar IS 'Scalar Uchar Values Table';
CREATE INDEX att_scalar_devuchar_att_conf_id_idx ON att_scalar_devuchar (att_conf_id);
CREATE INDEX att_scalar_devuchar_att_conf_id_data_time_idx ON att_scalar_devuchar (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devlong64 (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r bigint,
    value_w bigint,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devlong64 IS 'Scalar Long64 Values Table';
CREATE INDEX att_scalar_devlong64_att_conf_id_idx ON att_scalar_devlong64 (att_conf_id);
CREATE INDEX att_scalar_devlong64_att_conf_id_data_time_idx ON att_scalar_devlong64 (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devulong64 (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r ulong64,
    value_w ulong64,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devulong64 IS 'Scalar Ulong64 Values Table';
CREATE INDEX att_scalar_devulong64_att_conf_id_idx ON att_scalar_devulong64 (att_conf_id);
CREATE INDEX att_scalar_devulong64_att_conf_id_data_time_idx ON att_scalar_devulong64 (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devencoded (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r bytea,
    value_w bytea,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devencoded IS 'Scalar Encoded Values Table';
CREATE INDEX att_scalar_devencoded_att_conf_id_idx ON att_scalar_devencoded (att_conf_id);
CREATE INDEX att_scalar_devencoded_att_conf_id_data_time_idx ON att_scalar_devencoded (att_conf_id, data_time DESC);

CREATE TABLE att_scalar_devenum (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r_label text,
    value_r smallint,
    value_w_label text,
    value_w smallint,
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_scalar_devenum IS 'Scalar Enum Values Table';
CREATE INDEX att_scalar_devenum_att_conf_id_idx ON att_scalar_devenum (att_conf_id);
CREATE INDEX att_scalar_devenum_att_conf_id_data_time_idx ON att_scalar_devenum (att_conf_id, data_time DESC);

CREATE TABLE att_array_devboolean (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r boolean[],
    value_w boolean[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devboolean IS 'Array Boolean Values Table';
CREATE INDEX att_array_devboolean_att_conf_id_idx ON att_array_devboolean (att_conf_id);
CREATE INDEX att_array_devboolean_att_conf_id_data_time_idx ON att_array_devboolean (att_conf_id, data_time DESC);

CREATE TABLE att_array_devshort (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r smallint[],
    value_w smallint[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devshort IS 'Array Short Values Table';
CREATE INDEX att_array_devshort_att_conf_id_idx ON att_array_devshort (att_conf_id);
CREATE INDEX att_array_devshort_att_conf_id_data_time_idx ON att_array_devshort (att_conf_id, data_time DESC);

CREATE TABLE att_array_devlong (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r integer[],
    value_w integer[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devlong IS 'Array Long Values Table';
CREATE INDEX att_array_devlong_att_conf_id_idx ON att_array_devlong (att_conf_id);
CREATE INDEX att_array_devlong_att_conf_id_data_time_idx ON att_array_devlong (att_conf_id, data_time DESC);

CREATE TABLE att_array_devfloat (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r real[],
    value_w real[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devfloat IS 'Array Float Values Table';
CREATE INDEX att_array_devfloat_att_conf_id_idx ON att_array_devfloat (att_conf_id);
CREATE INDEX att_array_devfloat_att_conf_id_data_time_idx ON att_array_devfloat (att_conf_id, data_time DESC);

CREATE TABLE att_array_devdouble (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r double precision[],
    value_w double precision[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devdouble IS 'Array Double Values Table';
CREATE INDEX att_array_devdouble_att_conf_id_idx ON att_array_devdouble (att_conf_id);
CREATE INDEX att_array_devdouble_att_conf_id_data_time_idx ON att_array_devdouble (att_conf_id, data_time DESC);

CREATE TABLE att_array_devushort (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r ushort[],
    value_w ushort[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devushort IS 'Array Ushort Values Table';
CREATE INDEX att_array_devushort_att_conf_id_idx ON att_array_devushort (att_conf_id);
CREATE INDEX att_array_devushort_att_conf_id_data_time_idx ON att_array_devushort (att_conf_id, data_time DESC);

CREATE TABLE att_array_devulong (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r ulong[],
    value_w ulong[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devulong IS 'Array Ulong Values Table';
CREATE INDEX att_array_devulong_att_conf_id_idx ON att_array_devulong (att_conf_id);
CREATE INDEX att_array_devulong_att_conf_id_data_time_idx ON att_array_devulong (att_conf_id, data_time DESC);

CREATE TABLE att_array_devstring (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r text[],
    value_w text[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devstring IS 'Array String Values Table';
CREATE INDEX att_array_devstring_att_conf_id_idx ON att_array_devstring (att_conf_id);
CREATE INDEX att_array_devstring_att_conf_id_data_time_idx ON att_array_devstring (att_conf_id, data_time DESC);

CREATE TABLE att_array_devstate (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r integer[],
    value_w integer[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devstate IS 'Array State Values Table';
CREATE INDEX att_array_devstate_att_conf_id_idx ON att_array_devstate (att_conf_id);
CREATE INDEX att_array_devstate_att_conf_id_data_time_idx ON att_array_devstate (att_conf_id, data_time DESC);

CREATE TABLE att_array_devuchar (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r uchar[],
    value_w uchar[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devuchar IS 'Array Uchar Values Table';
CREATE INDEX att_array_devuchar_att_conf_id_idx ON att_array_devuchar (att_conf_id);
CREATE INDEX att_array_devuchar_att_conf_id_data_time_idx ON att_array_devuchar (att_conf_id, data_time DESC);

CREATE TABLE att_array_devlong64 (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r bigint[],
    value_w bigint[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devlong64 IS 'Array Long64 Values Table';
CREATE INDEX att_array_devlong64_att_conf_id_idx ON att_array_devlong64 (att_conf_id);
CREATE INDEX att_array_devlong64_att_conf_id_data_time_idx ON att_array_devlong64 (att_conf_id, data_time DESC);

CREATE TABLE att_array_devulong64 (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r ulong64[],
    value_w ulong64[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devulong64 IS 'Array Ulong64 Values Table';
CREATE INDEX att_array_devulong64_att_conf_id_idx ON att_array_devulong64 (att_conf_id);
CREATE INDEX att_array_devulong64_att_conf_id_data_time_idx ON att_array_devulong64 (att_conf_id, data_time DESC);

CREATE TABLE att_array_devencoded (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r bytea[],
    value_w bytea[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devencoded IS 'Array Encoded Values Table';
CREATE INDEX att_array_devencoded_att_conf_id_idx ON att_array_devencoded (att_conf_id);
CREATE INDEX att_array_devencoded_att_conf_id_data_time_idx ON att_array_devencoded (att_conf_id, data_time DESC);

CREATE TABLE att_array_devenum (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r_label text[],
    value_r smallint[],
    value_w_label text[],
    value_w smallint[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_array_devenum IS 'Array Enum Values Table';
CREATE INDEX att_array_devenum_att_conf_id_idx ON att_array_devenum (att_conf_id);
CREATE INDEX att_array_devenum_att_conf_id_data_time_idx ON att_array_devenum (att_conf_id, data_time DESC);

CREATE TABLE att_image_devboolean (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r boolean[],
    value_w boolean[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devboolean IS 'Image Boolean Values Table';
CREATE INDEX att_image_devboolean_att_conf_id_idx ON att_image_devboolean (att_conf_id);
CREATE INDEX att_image_devboolean_att_conf_id_data_time_idx ON att_image_devboolean (att_conf_id, data_time DESC);

CREATE TABLE att_image_devshort (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r smallint[],
    value_w smallint[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devshort IS 'Image Short Values Table';
CREATE INDEX att_image_devshort_att_conf_id_idx ON att_image_devshort (att_conf_id);
CREATE INDEX att_image_devshort_att_conf_id_data_time_idx ON att_image_devshort (att_conf_id, data_time DESC);

CREATE TABLE att_image_devlong (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r integer[],
    value_w integer[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devlong IS 'Image Long Values Table';
CREATE INDEX att_image_devlong_att_conf_id_idx ON att_image_devlong (att_conf_id);
CREATE INDEX att_image_devlong_att_conf_id_data_time_idx ON att_image_devlong (att_conf_id, data_time DESC);

CREATE TABLE att_image_devfloat (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r real[],
    value_w real[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devfloat IS 'Image Float Values Table';
CREATE INDEX att_image_devfloat_att_conf_id_idx ON att_image_devfloat (att_conf_id);
CREATE INDEX att_image_devfloat_att_conf_id_data_time_idx ON att_image_devfloat (att_conf_id, data_time DESC);

CREATE TABLE att_image_devdouble (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r double precision[],
    value_w double precision[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devdouble IS 'Image Double Values Table';
CREATE INDEX att_image_devdouble_att_conf_id_idx ON att_image_devdouble (att_conf_id);
CREATE INDEX att_image_devdouble_att_conf_id_data_time_idx ON att_image_devdouble (att_conf_id, data_time DESC);

CREATE TABLE att_image_devushort (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r ushort[],
    value_w ushort[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devushort IS 'Image Ushort Values Table';
CREATE INDEX att_image_devushort_att_conf_id_idx ON att_image_devushort (att_conf_id);
CREATE INDEX att_image_devushort_att_conf_id_data_time_idx ON att_image_devushort (att_conf_id, data_time DESC);

CREATE TABLE att_image_devulong (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r ulong[],
    value_w ulong[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devulong IS 'Image Ulong Values Table';
CREATE INDEX att_image_devulong_att_conf_id_idx ON att_image_devulong (att_conf_id);
CREATE INDEX att_image_devulong_att_conf_id_data_time_idx ON att_image_devulong (att_conf_id, data_time DESC);

CREATE TABLE att_image_devstring (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r text[],
    value_w text[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devstring IS 'Image String Values Table';
CREATE INDEX att_image_devstring_att_conf_id_idx ON att_image_devstring (att_conf_id);
CREATE INDEX att_image_devstring_att_conf_id_data_time_idx ON att_image_devstring (att_conf_id, data_time DESC);

CREATE TABLE att_image_devstate (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r integer[],
    value_w integer[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devstate IS 'Image State Values Table';
CREATE INDEX att_image_devstate_att_conf_id_idx ON att_image_devstate (att_conf_id);
CREATE INDEX att_image_devstate_att_conf_id_data_time_idx ON att_image_devstate (att_conf_id, data_time DESC);

CREATE TABLE att_image_devuchar (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r uchar[],
    value_w uchar[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devuchar IS 'Image Uchar Values Table';
CREATE INDEX att_image_devuchar_att_conf_id_idx ON att_image_devuchar (att_conf_id);
CREATE INDEX att_image_devuchar_att_conf_id_data_time_idx ON att_image_devuchar (att_conf_id, data_time DESC);

CREATE TABLE att_image_devlong64 (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r bigint[],
    value_w bigint[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devlong64 IS 'Image Long64 Values Table';
CREATE INDEX att_image_devlong64_att_conf_id_idx ON att_image_devlong64 (att_conf_id);
CREATE INDEX att_image_devlong64_att_conf_id_data_time_idx ON att_image_devlong64 (att_conf_id, data_time DESC);

CREATE TABLE att_image_devulong64 (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r ulong64[],
    value_w ulong64[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devulong64 IS 'Image Ulong64 Values Table';
CREATE INDEX att_image_devulong64_att_conf_id_idx ON att_image_devulong64 (att_conf_id);
CREATE INDEX att_image_devulong64_att_conf_id_data_time_idx ON att_image_devulong64 (att_conf_id, data_time DESC);

CREATE TABLE att_image_devencoded (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r bytea[],
    value_w bytea[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devencoded IS 'Image Encoded Values Table';
CREATE INDEX att_image_devencoded_att_conf_id_idx ON att_image_devencoded (att_conf_id);
CREATE INDEX att_image_devencoded_att_conf_id_data_time_idx ON att_image_devencoded (att_conf_id, data_time DESC);

CREATE TABLE att_image_devenum (
    att_conf_id integer NOT NULL,
    data_time timestamp with time zone NOT NULL,
    value_r_label text[],
    value_r smallint[],
    value_w_label text[],
    value_w smallint[],
    quality smallint,
    att_error_desc_id integer,
    details json,
    PRIMARY KEY (att_conf_id, data_time),
    FOREIGN KEY (att_conf_id) REFERENCES att_conf (att_conf_id),
    FOREIGN KEY (att_error_desc_id) REFERENCES att_error_desc (att_error_desc_id)
);
COMMENT ON TABLE att_image_devenum IS 'Image Enum Values Table';
CREATE INDEX att_image_devenum_att_conf_id_idx ON att_image_devenum (att_conf_id);
CREATE INDEX att_image_devenum_att_conf_id_data_time_idx ON att_image_devenum (att_conf_id, data_time DESC);

INSERT INTO att_conf_type (type, type_num) VALUES ('DEV_BOOLEAN', 1), ('DEV_SHORT', 2), ('DEV_LONG', 3), ('DEV_FLOAT', 4), ('DEV_DOUBLE', 5), ('DEV_USHORT', 6), ('DEV_ULONG', 7), ('DEV_STRING', 8), ('DEV_STATE', 19), ('DEV_UCHAR', 22), ('DEV_LONG64', 23), ('DEV_ULONG64', 24), ('DEV_ENCODED', 28), ('DEV_ENUM', 29);
INSERT INTO att_conf_format (format, format_num) VALUES ('SCALAR', 0), ('SPECTRUM', 1), ('IMAGE', 2);
INSERT INTO att_conf_write (write, write_num) VALUES ('READ', 0), ('READ_WITH_WRITE', 1), ('WRITE', 2), ('READ_WRITE', 3);
INSERT INTO att_history_event (event) VALUES ('add'), ('start'), ('stop'), ('remove'), ('insert_param'), ('update_ttl'), ('pause'), ('crash');

-- devenum labels, as HDB++ does: looked up in the latest att_parameter.enum_labels of the attribute.
-- Unlike the published array trigger, images keep their 2-D shape and empty arrays give '{}'.
CREATE OR REPLACE FUNCTION hdb_enum_labels(att integer) RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT enum_labels FROM att_parameter WHERE att_conf_id = att ORDER BY recv_time DESC LIMIT 1
$$;

CREATE OR REPLACE FUNCTION hdb_label_array(labels text[], v smallint[]) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN v IS NULL THEN NULL
        WHEN array_ndims(v) = 2 THEN (
            SELECT array_agg(ARRAY(SELECT labels[v[i][j] + 1] FROM generate_subscripts(v, 2) AS j ORDER BY j) ORDER BY i)
            FROM generate_subscripts(v, 1) AS i)
        ELSE coalesce((SELECT array_agg(labels[x + 1] ORDER BY n) FROM unnest(v) WITH ORDINALITY AS u(x, n)), '{}')
    END
$$;

CREATE OR REPLACE FUNCTION set_enum_label() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE labels text[] := hdb_enum_labels(NEW.att_conf_id);
BEGIN
    NEW.value_r_label := labels[NEW.value_r + 1];
    NEW.value_w_label := labels[NEW.value_w + 1];
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION set_enum_label_array() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE labels text[] := hdb_enum_labels(NEW.att_conf_id);
BEGIN
    NEW.value_r_label := hdb_label_array(labels, NEW.value_r);
    NEW.value_w_label := hdb_label_array(labels, NEW.value_w);
    RETURN NEW;
END $$;

CREATE TRIGGER enum_label_trigger BEFORE INSERT ON att_scalar_devenum FOR EACH ROW EXECUTE FUNCTION set_enum_label();
CREATE TRIGGER enum_label_trigger BEFORE INSERT ON att_array_devenum FOR EACH ROW EXECUTE FUNCTION set_enum_label_array();
CREATE TRIGGER enum_label_trigger BEFORE INSERT ON att_image_devenum FOR EACH ROW EXECUTE FUNCTION set_enum_label_array();
