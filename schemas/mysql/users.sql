-- HDB++ users (server-global) and their grants on database hdbpp
CREATE USER IF NOT EXISTS 'hdbpprw'@'%' IDENTIFIED BY 'hdbpp';
CREATE USER IF NOT EXISTS 'hdbppro'@'%' IDENTIFIED BY 'hdbpp';
GRANT SELECT, INSERT, UPDATE, DELETE ON `hdbpp`.* TO 'hdbpprw'@'%';
GRANT SELECT ON `hdbpp`.* TO 'hdbppro'@'%';
