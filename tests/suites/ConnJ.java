// ConnJ.java -- what a Java application does through MariaDB Connector/J
// and a HikariCP pool, printed one observation a line, so that the same
// program run directly on MariaDB and through dal-proxy can be compared
// line by line (tests/suites/proxy_connj_test.sh).
//
//   java ConnJ PORT USER PASSWORD [proxy]
//
// The server (127.0.0.1:PORT) serves the databases shop (tables acct and
// log) and hr (table staff).  With `proxy`, the checks of dal's own
// refusals run too; their lines start with "proxy:" (a server runs those
// statements, so they have nothing to be compared with).
//
// Four pools, one for each of useServerPrepStmts x rewriteBatchedStatements;
// two validate a borrowed connection by the driver's isValid (no
// connectionTestQuery), two with SELECT 1, and one runs with
// useAffectedRows=true (no CLIENT_FOUND_ROWS).  Connection ids and the
// like, which differ between any two servers, are never printed: what is
// printed is whether they stayed the same.

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.LocalDateTime;

public final class ConnJ {
    private static String port, user, password;
    private static boolean proxy;
    private static String run; // the pool's name, the first word of each line

    private static void out(String what, Object value) {
        System.out.println(run + " " + what + ": " + value);
    }

    public static void main(String[] args) throws Exception {
        port = args[0];
        user = args[1];
        password = args[2];
        proxy = args.length > 3 && args[3].equals("proxy");
        // validate every borrowed connection, not only one idle for 500 ms
        System.setProperty("com.zaxxer.hikari.aliveBypassWindowMs", "0");
        pool("text", false, false, null, false);
        pool("text-rewrite", false, true, "SELECT 1", true);
        pool("server", true, false, "SELECT 1", false);
        pool("server-rewrite", true, true, null, false);
    }

    private static void pool(String name, boolean serverPs, boolean rewrite, String testQuery,
                             boolean affectedRows) throws Exception {
        run = name;
        HikariConfig cfg = new HikariConfig();
        cfg.setJdbcUrl("jdbc:mariadb://127.0.0.1:" + port + "/shop?useServerPrepStmts=" + serverPs
                       + "&rewriteBatchedStatements=" + rewrite + "&useAffectedRows=" + affectedRows);
        cfg.setUsername(user);
        cfg.setPassword(password);
        cfg.setMaximumPoolSize(1);
        cfg.setCatalog("shop"); // what the pool puts back after a setCatalog
        cfg.setPoolName(name);
        if (testQuery != null)
            cfg.setConnectionTestQuery(testQuery);
        try (HikariDataSource ds = new HikariDataSource(cfg)) {
            long id = connectionId(ds);
            try (Connection c = ds.getConnection()) {
                metadata(c);
                reset(c);
                types(c);
                noBackslashEscapes(c);
                batch(c, rewrite);
                keys(c);
                updateCount(c);
                transaction(c);
                rollback(c);
                serverError(c);
                if (proxy)
                    dalRefusals(c);
            }
            catalog(ds);
            autocommit(ds);
            out("validated and kept its connection", connectionId(ds) == id);
        }
    }

    private static long connectionId(HikariDataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT CONNECTION_ID()")) {
            r.next();
            return r.getLong(1);
        }
    }

    private static void metadata(Connection c) throws SQLException {
        DatabaseMetaData m = c.getMetaData();
        out("product", m.getDatabaseProductName());
        out("product version", m.getDatabaseProductVersion());
        out("product major.minor", m.getDatabaseMajorVersion() + "." + m.getDatabaseMinorVersion());
        out("driver", m.getDriverName() + " " + m.getDriverVersion());
        out("isolation", c.getTransactionIsolation());
        out("catalog", c.getCatalog());
        out("autocommit", c.getAutoCommit());
    }

    private static void reset(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.executeUpdate("DELETE FROM acct");
            s.executeUpdate("TRUNCATE TABLE log");
        }
    }

    // every column of every row, with the result's metadata
    private static void show(String what, ResultSet r) throws SQLException {
        ResultSetMetaData m = r.getMetaData();
        for (int i = 1; i <= m.getColumnCount(); i++)
            out(what + " column " + i, m.getColumnLabel(i) + " name=" + m.getColumnName(i) + " table=" + m.getTableName(i)
                + " type=" + m.getColumnType(i) + " " + m.getColumnTypeName(i) + " class="
                + m.getColumnClassName(i) + " precision=" + m.getPrecision(i) + " scale="
                + m.getScale(i) + " size=" + m.getColumnDisplaySize(i) + " nullable="
                + m.isNullable(i) + " signed=" + m.isSigned(i) + " ai=" + m.isAutoIncrement(i));
        int n = 0;
        while (r.next()) {
            StringBuilder b = new StringBuilder();
            for (int i = 1; i <= m.getColumnCount(); i++)
                b.append(i > 1 ? " | " : "").append(value(r.getObject(i)));
            out(what + " row " + ++n, b);
        }
        out(what + " rows", n);
    }

    private static String value(Object v) {
        if (v == null)
            return "NULL";
        if (v instanceof byte[]) {
            StringBuilder b = new StringBuilder("0x");
            for (byte x : (byte[]) v)
                b.append(String.format("%02x", x & 0xff));
            return b + " (byte[])";
        }
        return v + " (" + v.getClass().getSimpleName() + ")";
    }

    // the value alone: the proxy answers SELECT DATABASE() itself, its
    // column's decimals 0 where a server's are 39
    private static String scalar(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return value(r.getObject(1));
        }
    }

    private static void query(Connection c, String what, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            show(what, r);
        }
    }

    // DOUBLE, DECIMAL, DATETIME(6), BIT, BLOB (every byte a client-side
    // prepared statement escapes: NUL, quote, backslash) and JSON written
    // with parameters, read back by a point read and a prepared one
    private static void types(Connection c) throws SQLException {
        byte[] blob = {0, 39, 92, 34, 10, 13, 26, (byte) 0xff, (byte) 0x80, 65};
        try (PreparedStatement p = c.prepareStatement(
                 "INSERT INTO acct (id, owner, bal, ratio, ts, flags, data, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
            p.setInt(1, 1);
            p.setString(2, "O'Brien \\ \u00e9");
            p.setBigDecimal(3, new BigDecimal("-1234567890.12"));
            p.setDouble(4, 0.1 + 0.2);
            p.setTimestamp(5, Timestamp.valueOf(LocalDateTime.of(2024, 2, 29, 23, 59, 58, 123456000)));
            p.setInt(6, 0xa5);
            p.setBytes(7, blob);
            p.setString(8, "{\"k\": [1, null, \"x\"]}");
            out("insert types", p.executeUpdate());
            p.setInt(1, 2);
            p.setString(2, null);
            p.setNull(3, java.sql.Types.DECIMAL);
            p.setDouble(4, -2.5e-300);
            p.setObject(5, LocalDateTime.of(1999, 12, 31, 0, 0, 0, 1000));
            p.setInt(6, 0);
            p.setNull(7, java.sql.Types.BLOB);
            p.setNull(8, java.sql.Types.VARCHAR);
            out("insert nulls", p.executeUpdate());
        }
        query(c, "types", "SELECT * FROM acct WHERE id = 1");
        try (PreparedStatement p = c.prepareStatement(
                 "SELECT id, owner, bal, ratio, ts, flags, data, doc FROM acct WHERE id = ?")) {
            for (int id : new int[] {1, 2}) {
                p.setInt(1, id);
                try (ResultSet r = p.executeQuery()) {
                    show("prepared types " + id, r);
                }
            }
        }
        try (Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT ratio, bal, ts, flags, data, doc FROM acct WHERE id = 1")) {
            r.next();
            out("double exact", r.getDouble(1) == 0.1 + 0.2);
            out("decimal", r.getBigDecimal(2).toPlainString());
            out("datetime(6)", r.getObject(3, LocalDateTime.class));
            out("bit as long", r.getLong(4));
            out("blob same bytes", java.util.Arrays.equals(r.getBytes(5), blob));
            out("json as string", r.getString(6));
        }
    }

    // with NO_BACKSLASH_ESCAPES in sql_mode (the OK's status flag tells the
    // driver) a client-side prepared statement doubles quotes instead of
    // backslashing them: the value, with a backslash before a quote and
    // one at its end, stays one value
    private static void noBackslashEscapes(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SET @saved_mode = @@sql_mode");
            s.execute("SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO acct (id, owner) VALUES (?, ?)")) {
                p.setInt(1, 11);
                p.setString(2, "it's a \\' b\\");
                out("insert without backslash escapes", p.executeUpdate());
            }
            query(c, "without backslash escapes", "SELECT id, owner FROM acct WHERE id = 11");
            s.execute("SET sql_mode = @saved_mode");
            out("deleted", s.executeUpdate("DELETE FROM acct WHERE id = 11"));
        }
    }

    // batches on the sharded table (rows of both datasources) and the
    // unsharded one
    private static void batch(Connection c, boolean rewrite) throws SQLException {
        try (PreparedStatement p = c.prepareStatement("INSERT INTO acct (id, owner, bal) VALUES (?, ?, ?)")) {
            for (int id = 3; id <= 10; id++) {
                p.setInt(1, id);
                p.setString(2, "owner" + id);
                p.setBigDecimal(3, new BigDecimal(id * 10 + ".50"));
                p.addBatch();
            }
            out("batch counts", java.util.Arrays.toString(p.executeBatch()));
        }
        try (Statement s = c.createStatement()) {
            s.addBatch("UPDATE acct SET bal = bal + 1 WHERE id = 3");
            s.addBatch("UPDATE acct SET bal = bal + 1 WHERE id IN (4, 5, 99)");
            s.addBatch("DELETE FROM acct WHERE id = 10");
            out("statement batch counts", java.util.Arrays.toString(s.executeBatch()));
        }
        query(c, "after batch", "SELECT id, owner, bal FROM acct ORDER BY id");
    }

    private static void keys(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            out("insert log", s.executeUpdate("INSERT INTO log (msg) VALUES ('a')", Statement.RETURN_GENERATED_KEYS));
            try (ResultSet r = s.getGeneratedKeys()) {
                show("statement key", r);
            }
        }
        try (PreparedStatement p = c.prepareStatement("INSERT INTO log (msg) VALUES (?)",
                                                      Statement.RETURN_GENERATED_KEYS)) {
            p.setString(1, "b");
            out("prepared insert log", p.executeUpdate());
            try (ResultSet r = p.getGeneratedKeys()) {
                show("prepared key", r);
            }
            for (String m : new String[] {"c", "d", "e"}) {
                p.setString(1, m);
                p.addBatch();
            }
            out("batch log", java.util.Arrays.toString(p.executeBatch()));
            try (ResultSet r = p.getGeneratedKeys()) {
                show("batch keys", r);
            }
        }
        query(c, "log", "SELECT id, msg FROM log ORDER BY id");
    }

    // an UPDATE that matches rows it leaves as they are: counted with
    // CLIENT_FOUND_ROWS (Connector/J's default), not without it
    private static void updateCount(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("UPDATE acct SET owner = 'same' WHERE id IN (3, 4, 5, 6)");
            out("update count", s.getUpdateCount());
            s.execute("UPDATE acct SET owner = 'same' WHERE id IN (3, 4, 5, 6, 7)");
            out("update count unchanged", s.getUpdateCount());
        }
        try (PreparedStatement p = c.prepareStatement("UPDATE acct SET owner = ? WHERE id >= ?")) {
            p.setString(1, "same");
            p.setInt(2, 6);
            out("prepared update count", p.executeUpdate());
        }
    }

    // a point read and a read of every node in one transaction, a write,
    // committed
    private static void transaction(Connection c) throws SQLException {
        c.setAutoCommit(false);
        out("autocommit in transaction", c.getAutoCommit());
        try (PreparedStatement p = c.prepareStatement("SELECT id, owner, bal FROM acct WHERE id = ?")) {
            p.setInt(1, 5);
            try (ResultSet r = p.executeQuery()) {
                show("txn point", r);
            }
        }
        query(c, "txn scatter", "SELECT id, bal, ratio, ts FROM acct WHERE id > 1 ORDER BY bal DESC LIMIT 5");
        query(c, "txn aggregate", "SELECT COUNT(*), SUM(bal), MAX(ts), MIN(owner), AVG(ratio) FROM acct");
        query(c, "txn group", "SELECT owner, COUNT(*) AS n, SUM(bal) FROM acct GROUP BY owner ORDER BY owner");
        try (Statement s = c.createStatement()) {
            out("txn update", s.executeUpdate("UPDATE acct SET bal = bal * 2 WHERE id = 5"));
        }
        c.commit();
        c.setAutoCommit(true);
        query(c, "committed", "SELECT id, bal FROM acct WHERE id = 5");
    }

    private static void rollback(Connection c) throws SQLException {
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            out("txn insert", s.executeUpdate("INSERT INTO acct (id, owner) VALUES (50, 'gone')"));
            out("txn update own row", s.executeUpdate("UPDATE acct SET bal = 1 WHERE id = 50"));
            query(c, "before rollback", "SELECT id, owner, bal FROM acct WHERE id = 50");
        }
        c.rollback();
        c.setAutoCommit(true);
        query(c, "after rollback", "SELECT COUNT(*) FROM acct WHERE id = 50");
    }

    private static void error(String what, SQLException e) {
        out(what, e.getClass().getName() + " state=" + e.getSQLState() + " code=" + e.getErrorCode());
    }

    // the server's duplicate key, text and prepared; the connection serves on
    private static void serverError(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO acct (id, owner) VALUES (3, 'dup')");
            out("duplicate", "accepted");
        } catch (SQLException e) {
            error("duplicate", e);
        }
        try (PreparedStatement p = c.prepareStatement("INSERT INTO acct (id, owner) VALUES (?, ?)")) {
            p.setInt(1, 4);
            p.setString(2, "dup");
            p.executeUpdate();
            out("prepared duplicate", "accepted");
        } catch (SQLException e) {
            error("prepared duplicate", e);
        }
        try (Statement s = c.createStatement()) {
            s.executeQuery("SELECT nosuch FROM acct");
            out("unknown column", "accepted");
        } catch (SQLException e) {
            error("unknown column", e);
        }
        query(c, "after errors", "SELECT COUNT(*) FROM acct");
    }

    // statements dal refuses: a class no application retries, and the
    // connection serves on (HikariCP keeps it: proxy_connj_test.sh checks
    // the "validated and kept" line)
    private static void dalRefusals(Connection c) throws SQLException {
        String[] refused = {
            "INSERT INTO acct (owner) VALUES ('no shard key')",
            "INSERT INTO acct (id, owner) VALUES (NULL, 'null key')",
            "/*+ dal shard_value=x */ SELECT 1",
            "/*+ dal nosuchkey=1 */ SELECT 1",
            "/*+ dal datasource=nosuch */ SELECT 1",
            "/*+ dal server=bogus */ SELECT 1",
        };
        for (String sql : refused) {
            try (Statement s = c.createStatement()) {
                s.execute(sql);
                out("proxy: refused " + sql, "accepted");
            } catch (SQLException e) {
                error("proxy: refused " + sql, e);
            }
        }
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.executeUpdate("UPDATE acct SET bal = 0 WHERE id = 3");
            s.executeUpdate("UPDATE acct SET bal = 0 WHERE id = 4");
            out("proxy: second node in a transaction", "accepted");
        } catch (SQLException e) {
            error("proxy: second node in a transaction", e);
        }
        c.rollback();
        c.setAutoCommit(true);
        query(c, "proxy: after refusals", "SELECT COUNT(*) FROM acct");
    }

    // setCatalog / getCatalog between two databases, USE, and the pool
    // putting the catalog back when the connection returns
    private static void catalog(HikariDataSource ds) throws SQLException {
        try (Connection c = ds.getConnection()) {
            c.setCatalog("hr");
            out("catalog after setCatalog", c.getCatalog());
            query(c, "hr staff", "SELECT name, dept FROM staff ORDER BY name");
            try (Statement s = c.createStatement()) {
                s.execute("USE shop");
            }
            out("catalog after USE", c.getCatalog());
            out("shop database", scalar(c, "SELECT DATABASE()"));
            c.setCatalog("hr");
        }
        try (Connection c = ds.getConnection()) {
            out("catalog borrowed again", c.getCatalog());
            out("borrowed database", scalar(c, "SELECT DATABASE()"));
        }
    }

    // a connection returned with autocommit off comes back with it on (the
    // pool's default), its transaction rolled back
    private static void autocommit(HikariDataSource ds) throws SQLException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.executeUpdate("UPDATE acct SET owner = 'uncommitted' WHERE id = 7");
            }
        }
        try (Connection c = ds.getConnection()) {
            out("autocommit borrowed again", c.getAutoCommit());
            query(c, "returned uncommitted", "SELECT owner, @@autocommit FROM acct WHERE id = 7");
        }
    }
}
