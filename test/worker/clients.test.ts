import { contactPointPort } from '../../src/worker/clients';

describe('contactPointPort', () => {
  it('takes the port the contact points share, so discovered peers are reached on it too', () => {
    expect(contactPointPort(['127.0.0.1:19042', '127.0.0.2:19042'])).toBe(19042);
    expect(contactPointPort(['[::1]:29042'])).toBe(29042);
  });
  it("leaves the driver's default when no port, mixed ports or a bare IPv6 address is given", () => {
    expect(contactPointPort(['127.0.0.1'])).toBeUndefined();
    expect(contactPointPort(['127.0.0.1:9042', '127.0.0.2:9043'])).toBeUndefined();
    expect(contactPointPort(['127.0.0.1:9042', '127.0.0.2'])).toBeUndefined();
    expect(contactPointPort(['::1'])).toBeUndefined();
  });
});
